"""The import graph of ``openenv_hub``, read from its source with :mod:`ast`.

Every ``import`` and ``from ... import`` counts, wherever it stands: at the top of a module,
inside a function, or under ``if TYPE_CHECKING:`` (a type checker follows those too, and an
annotation that needs a module from a higher layer says the code leans on it). An edge goes from
the importing module to the module it names: ``from openenv_hub.hub import push`` is an edge to
``openenv_hub.hub`` (its ``__init__``), ``from openenv_hub.hub import _client`` one to the module
``openenv_hub.hub._client``. Importing ``a.b.c`` also runs ``a/__init__`` and ``a/b/__init__``;
those are not edges, as in import-linter.

A *unit* is what sits directly under ``openenv_hub/``: a package (``client``) or a module
(``types``); the layers of docs/architecture.md are made of units.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIBRARY = REPO / "openenv_hub"


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. "openenv_hub.client.pool"
    path: Path
    is_package: bool  # an __init__.py

    @property
    def unit(self) -> str:
        """``client`` for ``openenv_hub.client.pool``; ``""`` for the package root."""
        parts = self.name.split(".")
        return parts[1] if len(parts) > 1 else ""

    @property
    def is_public(self) -> bool:
        return not any(part.startswith("_") for part in self.name.split(".")[1:])


def modules(package: Path = LIBRARY) -> dict[str, Module]:
    """Every module of ``package``, by dotted name (cookiecutter templates and tests are not
    its code)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package.parent)
        if {"_templates", "tests"} & set(relative.parts):
            continue
        parts = list(relative.with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        found[".".join(parts)] = Module(".".join(parts), path, is_package)
    return found


def imported_names(module: Module) -> Iterator[tuple[str, int]]:
    """Each dotted name ``module`` imports, made absolute, with its line: ``a.b`` for
    ``import a.b``, ``X.Y`` for ``from X import Y`` (a module, or a name in module ``X``)."""
    tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.module, node.level)
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno


def _absolute(module: Module, name: str | None, level: int) -> str:
    if level == 0:
        return name or ""
    parts = module.name.split(".")
    if not module.is_package:
        parts.pop()
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, name] if name else parts)


def outside_packages(repo: Path = REPO) -> list[Path]:
    """The code in this repository that uses the library from outside: the ``openenv``
    command, the reference environments and the Spaces."""
    found = [repo / "cli" / "openenv_hub_cli"]
    for parent in ("envs", "spaces"):
        found += sorted(p.parent for p in (repo / parent).glob("*/*/__init__.py"))
    return found


def edges(
    found: dict[str, Module], importers: Iterable[Module] | None = None
) -> dict[tuple[str, str], int]:
    """(importer, imported) for every import of a module in ``found`` by one of ``importers``
    (by default ``found`` itself), with the line of its first occurrence in the importer."""
    result: dict[tuple[str, str], int] = {}
    for module in found.values() if importers is None else importers:
        for name, line in imported_names(module):
            target = _module_named(name, found)
            if target is not None and target != module.name:
                result.setdefault((module.name, target), line)
    return result


def through_own_package(found: dict[str, Module]) -> dict[tuple[str, str], int]:
    """(importer, package) for every ``from P import ...`` (``from . import ...`` included) in a
    module inside package ``P``, with its line: the names come through ``P``'s ``__init__``,
    which imports the package's modules, so each such import is a cycle through ``__init__``
    (the importer should name the submodule itself: ``import P.sub as sub``)."""
    packages = {name for name, module in found.items() if module.is_package}
    result: dict[tuple[str, str], int] = {}
    for module in found.values():
        tree = ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = _absolute(module, node.module, node.level)
            if base in packages and module.name.startswith(f"{base}."):
                result.setdefault((module.name, base), node.lineno)
    return result


def _module_named(name: str, found: dict[str, Module]) -> str | None:
    """``name`` if it is a library module, else the module it is a name in; None outside."""
    while name not in found:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def cycles(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in pairs:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)
