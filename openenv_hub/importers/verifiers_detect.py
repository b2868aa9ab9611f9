"""Finding a verifiers environment by reading source, never running it: a module that imports
``verifiers`` and defines ``load_environment`` at its top level (RFC 006d's rule).

The source is a ``.py`` file, a folder (a package, or a project holding one), or the name of an
installed module, located with the import system's path finder without importing it or its
parents. Each file is parsed with :mod:`ast`; nothing of it executes.

Layer: client.
"""

from __future__ import annotations

import ast
import importlib.machinery
from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.errors import ConfigurationError

__all__ = ["DetectedEnvironment", "detect_verifiers", "locate_source"]

_SKIPPED = {".git", ".venv", "venv", "__pycache__", "build", "dist", "node_modules", ".tox"}
#: The environment classes of verifiers' classic API, which the wrapper runs.
KNOWN_CLASSES = ("SingleTurnEnv", "MultiTurnEnv", "ToolEnv", "StatefulToolEnv", "Environment")


@dataclass(frozen=True)
class DetectedEnvironment:
    """A ``load_environment`` found in source.

    Attributes:
        root: The folder to put on ``sys.path`` to import the module.
        module: The module's dotted name from ``root``.
        file: The file that defines it.
        parameters: ``load_environment``'s parameter names.
        classes: The verifiers environment classes its body names (``SingleTurnEnv``, ...).
    """

    root: Path
    module: str
    file: Path
    parameters: list[str] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)


def locate_source(source: str) -> Path:
    """The file or folder ``source`` names: a path, else an installed module's file (found
    without importing anything).

    Raises:
        ConfigurationError: Neither a path nor an installed module.
    """
    path = Path(source)
    if path.exists():
        return path
    search: list[str] | None = None
    spec = None
    for part in source.split("."):
        spec = importlib.machinery.PathFinder.find_spec(part, search)
        if spec is None:
            break
        search = list(spec.submodule_search_locations or [])
    if spec is None or spec.origin in (None, "built-in", "frozen"):
        raise ConfigurationError(
            f"{source!r} is neither a file, a folder nor an installed module.",
            hint="Pass the environment's .py file, its folder, or its module's name.",
        )
    origin = Path(str(spec.origin))
    return origin.parent if origin.name == "__init__.py" else origin


def detect_verifiers(source: Path, *, module: str | None = None) -> DetectedEnvironment:
    """The one verifiers environment in ``source`` (or the one in ``module``).

    Raises:
        ConfigurationError: None is there, or several are and ``module`` does not choose.
    """
    source = Path(source)
    root = source.parent if source.is_file() else source
    files = [source] if source.is_file() else _python_files(source)
    found = [d for d in (_detected(root, f) for f in files) if d is not None]
    if module is not None:
        found = [d for d in found if d.module == module]
    if not found:
        where = f" in module {module}" if module else ""
        raise ConfigurationError(
            f"No verifiers environment in {source}{where}: no module imports verifiers and "
            "defines load_environment().",
            hint="Point at the environment's module (the one with load_environment).",
        )
    if len(found) > 1:
        names = ", ".join(sorted(d.module for d in found))
        raise ConfigurationError(
            f"{len(found)} verifiers environments in {source}: {names}.",
            hint="Choose one with --module NAME.",
        )
    return found[0]


def _python_files(folder: Path) -> list[Path]:
    return sorted(
        path
        for path in folder.rglob("*.py")
        if not _SKIPPED & set(path.relative_to(folder).parts[:-1])
    )


def _detected(root: Path, file: Path) -> DetectedEnvironment | None:
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None
    if not _imports_verifiers(tree):
        return None
    function = next(
        (
            node
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == "load_environment"
        ),
        None,
    )
    if function is None:
        return None
    arguments = function.args
    parameters = [a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]]
    called = {
        _called_name(node.func)
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and _called_name(node.func) in KNOWN_CLASSES
    }
    relative = file.relative_to(root).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return DetectedEnvironment(
        root=root.resolve(),
        module=".".join(parts) or file.stem,
        file=file.resolve(),
        parameters=parameters,
        classes=sorted(called),
    )


def _imports_verifiers(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(
            alias.name.split(".")[0] == "verifiers" for alias in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "verifiers":
            return True
    return False


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""
