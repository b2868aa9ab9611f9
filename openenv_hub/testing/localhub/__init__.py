"""Deprecated name of :mod:`openenv_hub.localhub`, kept so that old imports still work.

``import openenv_hub.testing.localhub`` (and any of its submodules, such as
``openenv_hub.testing.localhub.auth``) gives the very module objects of ``openenv_hub.localhub``
and warns once with a :class:`DeprecationWarning` naming the new path.

Layer: ui.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from openenv_hub.localhub import *  # noqa: F403
from openenv_hub.localhub import __all__  # noqa: F401
from openenv_hub.support.deprecation import warn_moved

OLD = __name__
NEW = "openenv_hub.localhub"


class _SubmoduleAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``openenv_hub.testing.localhub.X`` to the module ``openenv_hub.localhub.X``."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(OLD + "."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(NEW + spec.name[len(OLD) :])

    def exec_module(self, module: ModuleType) -> None:
        """The module is the new one, already executed."""


if not any(isinstance(finder, _SubmoduleAlias) for finder in sys.meta_path):
    sys.meta_path.append(_SubmoduleAlias())

warn_moved(__name__, NEW, removed_in="0.2")
