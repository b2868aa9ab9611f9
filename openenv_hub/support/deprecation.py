"""The warnings a name that moved gives when its old name is used.

Every old name says the version that removes it (``removed_in``, a later minor release than
the current one), and CHANGELOG.md lists it under "Deprecated" with that version.

A module kept under its old name re-exports the new module's objects and calls
:func:`warn_moved` in its body. The :class:`DeprecationWarning` is issued on behalf of the code
that imports the old name (so a warning filter for that code's module applies), with the line
of its ``import``. A function, class or argument kept under its old name calls
:func:`warn_renamed` where the old name is used.

Layer: core.
"""

from __future__ import annotations

import sys
import warnings
from types import FrameType

__all__ = ["deprecation_message", "warn_moved", "warn_renamed"]

#: Functions of the import machinery (importlib's, and any loader's ``exec_module``) that sit
#: between an ``import`` statement and the module it runs.
_IMPORTING = frozenset(
    {"exec_module", "_call_with_frames_removed", "_load_unlocked", "_find_and_load_unlocked",
     "_find_and_load", "_handle_fromlist", "_gcd_import", "import_module", "_load"}
)  # fmt: skip


def deprecation_message(old: str, instead: str, *, removed_in: str) -> str:
    """What an old name says: it is deprecated, the version that removes it, what to use.

    >>> deprecation_message("openenv_hub.images", "import openenv_hub.model.image_fields", removed_in="0.2")
    'openenv_hub.images is deprecated and will be removed in 0.2: import openenv_hub.model.image_fields instead.'
    """
    return f"{old} is deprecated and will be removed in {removed_in}: {instead} instead."


def warn_moved(old: str, new: str, *, removed_in: str) -> None:
    """Warn that the module ``old`` is deprecated, removed in version ``removed_in``, and
    ``new`` is the same module.

    Call it from the body of the module ``old`` (or from the loader that answers for it).
    ``removed_in`` names the version that no longer has ``old``.
    """
    text = deprecation_message(old, f"import {new}", removed_in=removed_in)
    importer = _importer(sys._getframe(2))  # 1 is the deprecated module's own body
    if importer is None:
        warnings.warn(text, DeprecationWarning, stacklevel=3)
        return
    warnings.warn_explicit(
        text,
        DeprecationWarning,
        importer.f_code.co_filename,
        importer.f_lineno,
        module=importer.f_globals.get("__name__", "<string>"),
        registry=importer.f_globals.setdefault("__warningregistry__", {}),
    )


def warn_renamed(old: str, new: str, *, removed_in: str, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated, removed in version ``removed_in``, and ``new`` is the
    same thing under its new name.

    ``stacklevel`` counts as :func:`warnings.warn` does, from the caller of this function: the
    default 2 points at the code that called the function that calls this one.
    """
    warnings.warn(
        deprecation_message(old, f"use {new}", removed_in=removed_in),
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


def _importer(frame: FrameType | None) -> FrameType | None:
    """The first frame, from ``frame`` outwards, that is not the import machinery's."""
    while frame is not None and (
        frame.f_code.co_name in _IMPORTING or "importlib" in frame.f_code.co_filename
    ):
        frame = frame.f_back
    return frame
