"""Imports run one way: clients -> runtimes -> the Hub and Docker, never back; and no module of
these packages imports a private (``_name``) module of another package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIBRARY = Path(__file__).resolve().parents[2] / "openenv_hub"

#: package -> the packages of openenv_hub it must never import (they sit above it)
NEVER = {
    "docker": {
        "runtimes",
        "client",
        "validation",
        "server",
        "ui",
        "providers",
        "localhub",
        "localdaytona",
    },
    "hub": {"runtimes", "client", "server", "ui", "providers", "localhub", "localdaytona"},
    "runtimes": {
        "client",
        "validation",
        "server",
        "ui",
        "providers",
        "localhub",
        "localdaytona",
        "testing",
    },
    "client": {"server", "ui", "providers", "validation", "localhub", "localdaytona", "testing"},
}


#: The module a Ray replica runs on its node: the server process there (as ``python -m
#: openenv_hub.server`` is in a container), so it takes the server's own settings.
SERVES = {"openenv_hub/runtimes/_ray_replica.py": {"server"}}


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return [name for name in names if name.startswith("openenv_hub.")]


@pytest.mark.parametrize("package", sorted(NEVER))
def test_a_package_imports_nothing_above_it(package: str) -> None:
    wrong = [
        f"{path.relative_to(LIBRARY.parent)}: {name}"
        for path in sorted((LIBRARY / package).rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[1] in NEVER[package]
        and name.split(".")[1] not in SERVES.get(path.relative_to(LIBRARY.parent).as_posix(), ())
    ]
    assert wrong == []


@pytest.mark.parametrize("package", sorted(NEVER))
def test_no_private_module_of_another_package_is_imported(package: str) -> None:
    wrong = [
        f"{path.relative_to(LIBRARY.parent)}: {name}"
        for path in sorted((LIBRARY / package).rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[1] != package
        and any(part.startswith("_") for part in name.split(".")[2:])
    ]
    assert wrong == []
