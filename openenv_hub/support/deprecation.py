"""The warnings a name that moved gives when its old name is used.

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

__all__ = ["warn_moved", "warn_renamed"]

#: Functions of the import machinery (importlib's, and any loader's ``exec_module``) that sit
#: between an ``import`` statement and the module it runs.
_IMPORTING = frozenset(
    {"exec_module", "_call_with_frames_removed", "_load_unlocked", "_find_and_load_unlocked",
     "_find_and_load", "_handle_fromlist", "_gcd_import", "import_module", "_load"}
)  # fmt: skip


def warn_moved(old: str, new: str, *, removed_in: str | None = None) -> None:
    """Warn that the module ``old`` is deprecated and ``new`` is the same module.

    Call it from the body of the module ``old`` (or from the loader that answers for it).
    ``removed_in`` names the version that no longer has ``old``.
    """
    until = f" (it is removed in {removed_in})" if removed_in else ""
    text = f"{old} is deprecated{until}: import {new} instead."
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


def warn_renamed(old: str, new: str, *, stacklevel: int = 2) -> None:
    """Warn that ``old`` is deprecated and ``new`` is the same thing under its new name.

    ``stacklevel`` counts as :func:`warnings.warn` does, from the caller of this function: the
    default 2 points at the code that called the function that calls this one.
    """
    warnings.warn(
        f"{old} is deprecated: use {new} instead.", DeprecationWarning, stacklevel=stacklevel + 1
    )


def _importer(frame: FrameType | None) -> FrameType | None:
    """The first frame, from ``frame`` outwards, that is not the import machinery's."""
    while frame is not None and (
        frame.f_code.co_name in _IMPORTING or "importlib" in frame.f_code.co_filename
    ):
        frame = frame.f_back
    return frame
