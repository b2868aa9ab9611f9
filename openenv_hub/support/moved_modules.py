"""Old module names that still import: each is answered with the module it became, and a warning.

The package root once held the environment model, the transport and the support modules side
by side; they now live in :mod:`openenv_hub.model`, :mod:`openenv_hub.transport` and
:mod:`openenv_hub.support`. ``import openenv_hub.manifest`` still works until the version
:func:`removed_in` names: a finder on :data:`sys.meta_path` hands back the module itself (the same
object, so ``isinstance`` and module state agree under both names) and warns on behalf of the
code that imported the old name.

Layer: core.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

from openenv_hub.support.deprecation import warn_moved

__all__ = ["MOVED", "REMOVED_IN", "install", "removed_in"]

#: The version whose release no longer answers the old names of this release's move.
REMOVED_IN = "0.3"

#: Old names deprecated before the move, which go sooner (CHANGELOG.md lists each).
_REMOVED_SOONER = {"openenv_hub.images": "0.2", "openenv_hub.spaces": "0.2"}

#: Old dotted name -> the module it is now.
MOVED: dict[str, str] = {
    "openenv_hub.environment": "openenv_hub.model.environment",
    "openenv_hub.episode_rules": "openenv_hub.model.episode_rules",
    "openenv_hub.in_process": "openenv_hub.model.in_process",
    "openenv_hub.tools": "openenv_hub.model.tools",
    "openenv_hub.tool_specs": "openenv_hub.model.tool_specs",
    "openenv_hub.frames": "openenv_hub.model.image_fields",
    "openenv_hub.images": "openenv_hub.model.image_fields",
    "openenv_hub.gym_spaces": "openenv_hub.model.gym_spaces",
    "openenv_hub.spaces": "openenv_hub.model.gym_spaces",
    "openenv_hub.manifest": "openenv_hub.model.manifest",
    "openenv_hub.manifest_sections": "openenv_hub.model.manifest_sections",
    "openenv_hub.serving": "openenv_hub.transport.uvicorn_serving",
    "openenv_hub.http_protocol": "openenv_hub.transport.uvicorn_http",
    "openenv_hub.ws_protocol": "openenv_hub.transport.uvicorn_websocket",
    "openenv_hub.frame_channel": "openenv_hub.transport.websocket_frames",
    "openenv_hub.asgi_relay": "openenv_hub.transport.asgi_relay",
    "openenv_hub.network": "openenv_hub.transport.local_ports",
    "openenv_hub.settings": "openenv_hub.support.settings",
    "openenv_hub.sync_bridge": "openenv_hub.support.sync_bridge",
    "openenv_hub.progress": "openenv_hub.support.progress",
    "openenv_hub.plots": "openenv_hub.support.plots",
    "openenv_hub.folder_imports": "openenv_hub.support.folder_imports",
    "openenv_hub.deprecation": "openenv_hub.support.deprecation",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of :data:`MOVED` and loads each as the module it became."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOVED:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = MOVED[spec.name]
        warn_moved(spec.name, new, removed_in=removed_in(spec.name))
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module it became has run already."""


_FINDER = _MovedModules()


def removed_in(old: str) -> str:
    """The version whose release no longer answers the old name ``old`` of :data:`MOVED`."""
    return _REMOVED_SOONER.get(old, REMOVED_IN)


def install() -> None:
    """Answer the old names from now on in this process (once, however often it is called)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
