"""Importing an author's module from their folder, and no one else's.

A manifest or a command line names the author's code as ``module:function`` (an oracle, a task
generator, a policy, a verifiers environment). Two environment folders commonly hold packages of
the same name (``openenv init my_env`` twice), and one Python process may load both: the UI,
a notebook, a test run. Python keeps the first ``my_env`` it imported in ``sys.modules`` and would
answer ``my_env.quality`` from it, so the folder named is put first on ``sys.path`` and a package
of the same name that came from elsewhere is forgotten before the import.

Layer: core.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["import_from_folder"]


def import_from_folder(module_name: str, folder: Path | None) -> ModuleType:
    """``module_name`` as ``folder`` holds it (as ``sys.path`` finds it when ``folder`` is None).

    ``folder`` stays first on ``sys.path`` afterwards, as the current folder does for
    ``python -m``: the author's functions run later and may import more of their folder.

    Raises:
        ImportError: (or whatever the module raises) It does not import.
    """
    if folder is not None:
        folder = folder.resolve()
        _forget_other_copies(module_name.partition(".")[0], folder)
        sys.path[:] = [str(folder), *(entry for entry in sys.path if entry != str(folder))]
    return importlib.import_module(module_name)


def _forget_other_copies(package: str, folder: Path) -> None:
    """Drop ``package`` (and its submodules) from ``sys.modules`` when ``folder`` holds a
    package or module of that name and the one imported came from somewhere else."""
    loaded = sys.modules.get(package)
    if loaded is None or not _holds(folder, package) or _comes_from(loaded, folder):
        return
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


def _holds(folder: Path, package: str) -> bool:
    return (folder / package).is_dir() or (folder / f"{package}.py").is_file()


def _comes_from(module: ModuleType, folder: Path) -> bool:
    places = [getattr(module, "__file__", None), *getattr(module, "__path__", [])]
    return any(p is not None and Path(p).resolve().is_relative_to(folder) for p in places)
