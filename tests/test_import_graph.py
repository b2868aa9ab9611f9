"""The import graph of ``openenv_hub``: layers, private modules, cycles, and layer docstrings.

The rules are docs/architecture.md's: a module imports only from its own layer or below; no code
outside a package imports a private (``_name``) module of it; no cycle between modules or
between units (what sits directly under ``openenv_hub/``). Every import counts, including ones
inside functions and under ``if TYPE_CHECKING:`` (see tests/import_graph.py for why).

KNOWN_VIOLATIONS lists the imports that broke the rules when this test was written; a new one
fails, and so does a listed one that no longer breaks a rule, so the list only shrinks.
"""

from __future__ import annotations

import ast
import functools
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from import_graph import LIBRARY, REPO, Module, cycles, edges, modules, outside_packages

# The layers, lowest first (docs/architecture.md shows this table; a test keeps the two equal).
# Names not in the tree yet are where they go when they move or appear.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("types", "errors", "protocol", "settings", "shown_urls", "sync_bridge")),
    (
        "model",
        ("manifest", "environment", "rubrics", "tool_specs", "tools", "images", "spaces"),
    ),
    ("services", ("docker", "hub", "packaging", "discovery")),
    ("runtimes", ("runtimes", "localhub", "providers")),
    ("client", ("client", "trajectories", "eval", "gymnasium", "trl", "validation")),
    ("server", ("server",)),
    ("ui", ("ui", "testing")),
]
LAYER_OF = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}
LAYER_NAME = {unit: name for name, units in LAYERS for unit in units}

# (importer, imported) pairs that broke a rule when this test was written. Remove a line when
# the import it names is gone or allowed; never add one.
KNOWN_VIOLATIONS: set[tuple[str, str]] = {
    # Upward: the importer's layer is below the imported module's.
    ("openenv_hub.hub._bundle", "openenv_hub.validation"),
    ("openenv_hub.hub._connect", "openenv_hub.providers"),
    ("openenv_hub.hub._connect", "openenv_hub.providers.hub"),
    ("openenv_hub.hub._connect", "openenv_hub.providers.space"),
    ("openenv_hub.providers._ray_replica", "openenv_hub.server.app"),
    ("openenv_hub.providers.launch", "openenv_hub.client._launch"),  # and private
    ("openenv_hub.providers.launch", "openenv_hub.client.env_client"),
    ("openenv_hub.providers.launch", "openenv_hub.validation.docker"),
    ("openenv_hub.providers.space", "openenv_hub.validation.docker"),
    ("openenv_hub.server.app", "openenv_hub.ui"),
    ("openenv_hub.server.app", "openenv_hub.ui.later"),
    # Private: a `_name` module imported from outside its package (the command line, the
    # reference environments and the Spaces count as outside).
    ("coding_env.client", "openenv_hub.client._core"),
    ("openenv_catalog.listing", "openenv_hub.hub._client"),
    ("openenv_catalog.listing", "openenv_hub.hub._errors"),
    ("openenv_catalog.listing", "openenv_hub.hub._versions"),
    ("openenv_hub.client.env_client", "openenv_hub.hub._connect"),
    ("openenv_hub.providers.hub", "openenv_hub.hub._client"),
    ("openenv_hub.providers.hub", "openenv_hub.hub._errors"),
    ("openenv_hub.providers.hub", "openenv_hub.hub._urls"),
    ("openenv_hub.providers.space", "openenv_hub.hub._client"),
    ("openenv_hub.providers.space", "openenv_hub.hub._errors"),
    ("openenv_hub.providers.space", "openenv_hub.hub._install"),
    ("openenv_hub.trajectories.hub", "openenv_hub.hub._client"),
    ("openenv_hub.trajectories.hub", "openenv_hub.hub._errors"),
    ("openenv_hub.trajectories.recorder", "openenv_hub.client._core"),
    ("openenv_hub.trl", "openenv_hub.client._core"),
    ("openenv_hub.validation.runtime", "openenv_hub.client._core"),
    ("openenv_hub_cli.deploy", "openenv_hub.providers._cleanup"),
    ("openenv_hub_cli.install", "openenv_hub.hub._client"),
    ("openenv_hub_cli.push", "openenv_hub.hub._wait"),
    # A package's own module importing its __init__ (which should only re-export).
    ("openenv_hub.providers._cleanup", "openenv_hub.providers"),
    ("openenv_hub.providers.docker", "openenv_hub.providers"),
    ("openenv_hub.providers.kubernetes", "openenv_hub.providers"),
    ("openenv_hub.providers.launch", "openenv_hub.providers"),
    ("openenv_hub.providers.local", "openenv_hub.providers"),
    ("openenv_hub.providers.ray", "openenv_hub.providers"),
    ("openenv_hub.providers.swarm", "openenv_hub.providers"),
    ("openenv_hub.ui.later", "openenv_hub.ui"),
    # Cycles inside a package, each listed by the edge (under TYPE_CHECKING) that closes it.
    ("openenv_hub.client._launch", "openenv_hub.client.env_client"),
    ("openenv_hub.hub._plan", "openenv_hub.hub._wheel_pin"),
    ("openenv_hub.server.watchdog", "openenv_hub.server.lifecycle"),
}

# Public modules whose docstring does not yet name their layer.
KNOWN_WITHOUT_LAYER_LINE: set[str] = {
    "openenv_hub.client",
    "openenv_hub.client.env_client",
    "openenv_hub.client.generic",
    "openenv_hub.client.mcp",
    "openenv_hub.client.pool",
    "openenv_hub.client.sync_client",
    "openenv_hub.client.sync_pool",
    "openenv_hub.discovery",
    "openenv_hub.environment",
    "openenv_hub.errors",
    "openenv_hub.gymnasium",
    "openenv_hub.hub",
    "openenv_hub.images",
    "openenv_hub.manifest",
    "openenv_hub.packaging",
    "openenv_hub.protocol",
    "openenv_hub.providers",
    "openenv_hub.providers.docker",
    "openenv_hub.providers.hub",
    "openenv_hub.providers.inventory",
    "openenv_hub.providers.kubernetes",
    "openenv_hub.providers.kubernetes_manifests",
    "openenv_hub.providers.labels",
    "openenv_hub.providers.launch",
    "openenv_hub.providers.local",
    "openenv_hub.providers.ray",
    "openenv_hub.providers.ray_inventory",
    "openenv_hub.providers.space",
    "openenv_hub.providers.swarm",
    "openenv_hub.providers.uv",
    "openenv_hub.providers.uv_cache",
    "openenv_hub.rubrics",
    "openenv_hub.rubrics.attribution",
    "openenv_hub.rubrics.base",
    "openenv_hub.rubrics.compose",
    "openenv_hub.rubrics.episode",
    "openenv_hub.rubrics.judge",
    "openenv_hub.server",
    "openenv_hub.server.app",
    "openenv_hub.server.calls",
    "openenv_hub.server.http",
    "openenv_hub.server.lifecycle",
    "openenv_hub.server.limits",
    "openenv_hub.server.mcp",
    "openenv_hub.server.observers",
    "openenv_hub.server.session",
    "openenv_hub.server.sessions",
    "openenv_hub.server.settings",
    "openenv_hub.server.tasks",
    "openenv_hub.server.threads",
    "openenv_hub.server.watchdog",
    "openenv_hub.server.websocket",
    "openenv_hub.server.worker",
    "openenv_hub.shown_urls",
    "openenv_hub.spaces",
    "openenv_hub.sync_bridge",
    "openenv_hub.testing",
    "openenv_hub.testing.judge",
    "openenv_hub.testing.localhub",
    "openenv_hub.testing.localhub.app",
    "openenv_hub.testing.localhub.auth",
    "openenv_hub.testing.localhub.clock",
    "openenv_hub.testing.localhub.errors",
    "openenv_hub.testing.localhub.git_http",
    "openenv_hub.testing.localhub.gitops",
    "openenv_hub.testing.localhub.gitrepo",
    "openenv_hub.testing.localhub.listing",
    "openenv_hub.testing.localhub.payloads",
    "openenv_hub.testing.localhub.proxy",
    "openenv_hub.testing.localhub.requestlog",
    "openenv_hub.testing.localhub.routes",
    "openenv_hub.testing.localhub.routes.account",
    "openenv_hub.testing.localhub.routes.control",
    "openenv_hub.testing.localhub.routes.deps",
    "openenv_hub.testing.localhub.routes.files",
    "openenv_hub.testing.localhub.routes.listing",
    "openenv_hub.testing.localhub.routes.refs",
    "openenv_hub.testing.localhub.routes.repos",
    "openenv_hub.testing.localhub.routes.spaces",
    "openenv_hub.testing.localhub.routes.upload",
    "openenv_hub.testing.localhub.server",
    "openenv_hub.testing.localhub.space_runtime",
    "openenv_hub.testing.localhub.storage",
    "openenv_hub.testing.pytest_plugin",
    "openenv_hub.tool_specs",
    "openenv_hub.tools",
    "openenv_hub.trajectories",
    "openenv_hub.trajectories.files",
    "openenv_hub.trajectories.hub",
    "openenv_hub.trajectories.recorder",
    "openenv_hub.trajectories.records",
    "openenv_hub.trajectories.server",
    "openenv_hub.trl",
    "openenv_hub.types",
    "openenv_hub.ui",
    "openenv_hub.ui.actions",
    "openenv_hub.ui.blocks",
    "openenv_hub.ui.context",
    "openenv_hub.ui.history",
    "openenv_hub.ui.labels",
    "openenv_hub.ui.later",
    "openenv_hub.ui.media",
    "openenv_hub.ui.observation",
    "openenv_hub.ui.readme",
    "openenv_hub.ui.schema",
    "openenv_hub.ui.tabs",
    "openenv_hub.ui.theme",
    "openenv_hub.ui.view",
    "openenv_hub.ui.widgets",
    "openenv_hub.validation",
    "openenv_hub.validation.docker",
    "openenv_hub.validation.failure",
    "openenv_hub.validation.imports",
    "openenv_hub.validation.result",
    "openenv_hub.validation.runtime",
    "openenv_hub.validation.sample",
    "openenv_hub.validation.static",
    "openenv_hub.validation.target",
}

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
