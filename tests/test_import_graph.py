"""The import graph of ``openenv_hub``: layers, private modules, cycles, and layer docstrings.

The rules are docs/architecture.md's: a module imports only from its own layer or below; no code
outside a package imports a private (``_name``) module of it; no cycle between modules or
between units (what sits directly under ``openenv_hub/``). Every import counts, including ones
inside functions and under ``if TYPE_CHECKING:`` (see tests/import_graph.py for why).

tests/import_graph_known.py lists the imports that broke the rules when this test was written; a
new one fails, and so does a listed one that no longer breaks a rule, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from import_graph import (
    LIBRARY,
    REPO,
    Module,
    cycles,
    edges,
    modules,
    outside_packages,
    through_own_package,
)
from import_graph_known import KNOWN_VIOLATIONS, KNOWN_WITHOUT_LAYER_LINE

# The layers, lowest first (docs/architecture.md shows this table; a test keeps the two equal).
# Names not in the tree yet are where they go when they move or appear.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("types", "shown_urls", "errors", "protocol", "support", "transport")),
    ("model", ("model", "rubrics", "checks")),
    ("services", ("docker", "hub", "packaging", "discovery", "capture", "sandbox")),
    ("runtimes", ("runtimes", "localhub", "localdaytona", "providers")),
    (
        "client",
        (
            "client",
            "trajectories",
            "eval",
            "gymnasium",
            "trl",
            "validation",
            "importers",
            "harness",
        ),
    ),
    ("server", ("server",)),
    ("ui", ("ui", "testing")),
]
LAYER_OF = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}
LAYER_NAME = {unit: name for name, units in LAYERS for unit in units}

LAYER_LINE = re.compile(r"^Layer: (?P<name>[a-z]+)\.$", re.M)


def _unit(name: str) -> str:
    parts = name.split(".")
    return parts[1] if parts[0] == LIBRARY.name and len(parts) > 1 else ""


def _rank(name: str) -> int:
    """The layer of a library module; the package root re-exports from all, so it is above."""
    unit = _unit(name)
    return len(LAYERS) if unit == "" else LAYER_OF[unit]


def _private_owner(name: str) -> str | None:
    """The package whose private module ``name`` is (or is inside), or None."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def _is_private_import(importer: str, imported: str) -> bool:
    owner = _private_owner(imported)
    return owner is not None and importer != owner and not importer.startswith(f"{owner}.")


def _is_upward(importer: str, imported: str) -> bool:
    return _unit(importer) != "" and _rank(importer) < _rank(imported)


@functools.cache
def _packages() -> frozenset[str]:
    return frozenset(name for name, module in modules().items() if module.is_package)


def _is_own_package_import(importer: str, imported: str) -> bool:
    """A module of package P importing P itself: P's ``__init__`` is for other packages."""
    return imported in _packages() and importer.startswith(f"{imported}.")


@functools.cache
def _all_edges() -> dict[tuple[str, str], int]:
    library = modules()
    found = edges(library)
    for package in outside_packages():
        found.update(edges(library, modules(package).values()))
    return found


@functools.cache
def _library_edges() -> dict[tuple[str, str], int]:
    return edges(modules())


def _show(pairs: Iterable[tuple[str, str]], lines: dict[tuple[str, str], int]) -> str:
    return "\n".join(f"    ({a!r}, {b!r}),  # line {lines.get((a, b), '?')}" for a, b in pairs)


def test_every_unit_has_a_layer() -> None:
    units = {_unit(name) for name in modules()} - {""}
    assert sorted(units - set(LAYER_OF)) == [], "add each to LAYERS and docs/architecture.md"


def test_no_import_goes_up_a_layer() -> None:
    found = _library_edges()
    upward = sorted(p for p in found if _is_upward(*p) and p not in KNOWN_VIOLATIONS)
    assert upward == [], "imports from a higher layer:\n" + _show(upward, found)


def test_no_private_module_is_imported_from_outside_its_package() -> None:
    found = _all_edges()
    private = sorted(p for p in found if _is_private_import(*p) and p not in KNOWN_VIOLATIONS)
    assert private == [], "imports of another package's private module:\n" + _show(private, found)


def test_no_module_imports_its_own_package() -> None:
    found = _library_edges()
    inward = sorted(p for p in found if _is_own_package_import(*p) and p not in KNOWN_VIOLATIONS)
    assert inward == [], "modules importing their own package's __init__:\n" + _show(inward, found)


def test_no_module_imports_a_name_through_its_own_package() -> None:
    """``from openenv_hub.server import settings`` inside ``openenv_hub.server`` reads the name
    through the package's ``__init__``, which imports the package's modules: a cycle through
    ``__init__`` (and the name may be a re-export, not the module). Import the submodule."""
    found = through_own_package(modules())
    through = sorted(found)
    assert through == [], "imports through the importer's own package __init__:\n" + _show(
        through, found
    )


def test_no_cycle_between_modules() -> None:
    remaining = [p for p in _library_edges() if p not in KNOWN_VIOLATIONS]
    found = cycles(remaining)
    assert found == [], "import cycles between modules:\n" + "\n".join(map(str, found))


def test_no_cycle_between_units() -> None:
    remaining = {
        (_unit(a), _unit(b))
        for a, b in _library_edges()
        if (a, b) not in KNOWN_VIOLATIONS and _unit(a) != _unit(b)
    }
    found = cycles(remaining)
    assert found == [], "import cycles between units:\n" + "\n".join(map(str, found))


def test_every_known_violation_still_occurs() -> None:
    """So that KNOWN_VIOLATIONS only shrinks: a fixed import must leave the list."""
    found = _all_edges()
    components = [set(component) for component in cycles(_library_edges())]

    def breaks_a_rule(a: str, b: str) -> bool:
        return (
            _is_private_import(a, b)
            or _is_upward(a, b)
            or _is_own_package_import(a, b)
            or any({a, b} <= component for component in components)
        )

    gone = sorted(p for p in KNOWN_VIOLATIONS if p not in found or not breaks_a_rule(*p))
    assert gone == [], "no longer a violation; remove from KNOWN_VIOLATIONS:\n" + _show(gone, {})


def _docstring(module: Module) -> str:
    tree = ast.parse(module.path.read_text(encoding="utf-8"))
    return ast.get_docstring(tree) or ""


def test_every_public_module_names_its_layer() -> None:
    wrong, missing = [], []
    for name, module in sorted(modules().items()):
        if not module.is_public or _unit(name) == "":
            continue
        stated = LAYER_LINE.search(_docstring(module))
        if stated is None:
            if name not in KNOWN_WITHOUT_LAYER_LINE:
                missing.append(name)
        elif stated["name"] != LAYER_NAME[_unit(name)]:
            wrong.append(f"{name}: says {stated['name']}, is {LAYER_NAME[_unit(name)]}")
    assert wrong == []
    assert missing == [], f"add a line 'Layer: NAME.' to the docstring of {missing}"


def test_every_module_known_without_a_layer_line_still_lacks_it() -> None:
    found = modules()
    stale = sorted(
        name
        for name in KNOWN_WITHOUT_LAYER_LINE
        if name not in found or LAYER_LINE.search(_docstring(found[name]))
    )
    assert stale == [], f"remove from KNOWN_WITHOUT_LAYER_LINE: {stale}"


def _architecture_layers() -> list[tuple[str, tuple[str, ...]]]:
    """The rows of the layer table in docs/architecture.md: | `name` | `unit`, `unit` | ..."""
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", section, re.M)
    return [(name, tuple(re.findall(r"`(\w+)`", units))) for name, units in rows]


def test_the_architecture_page_shows_the_layers_of_this_test() -> None:
    assert _architecture_layers() == LAYERS


def test_the_graph_sees_every_kind_of_import(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    files = {
        "__init__.py": "from pkg.a import f\n",
        "a.py": "from . import b\nfrom .sub import _hidden\n",
        "b.py": "def g():\n    import pkg.sub.c\n",
        "sub/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import f\n",
        "sub/_hidden.py": "",
        "sub/c.py": "from pkg.sub import _hidden as h\nimport os\n",
    }
    for name, code in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(textwrap.dedent(code), encoding="utf-8")
    assert set(edges(modules(package))) == {
        ("pkg", "pkg.a"),
        ("pkg.a", "pkg.b"),
        ("pkg.a", "pkg.sub._hidden"),
        ("pkg.b", "pkg.sub.c"),
        ("pkg.sub", "pkg.a"),
        ("pkg.sub.c", "pkg.sub._hidden"),
    }
    assert cycles(edges(modules(package))) == []
    assert set(through_own_package(modules(package))) == {
        ("pkg.a", "pkg"),
        ("pkg.sub.c", "pkg.sub"),
    }
    assert cycles([("x", "y"), ("y", "z"), ("z", "x"), ("z", "w")]) == [["x", "y", "z"]]


@pytest.mark.parametrize(
    ("importer", "imported", "private"),
    [
        ("openenv_hub.providers.hub", "openenv_hub.hub._client", True),
        ("openenv_hub_cli.push", "openenv_hub.hub._client", True),
        ("openenv_hub.hub._push", "openenv_hub.hub._client", False),
        ("openenv_hub.hub", "openenv_hub.hub._push", False),
        ("openenv_hub.client", "openenv_hub.client.pool", False),
    ],
)
def test_private_means_inside_the_package(importer: str, imported: str, private: bool) -> None:
    assert _is_private_import(importer, imported) is private
