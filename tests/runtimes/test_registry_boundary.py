"""One registry for every runtime path: no module of the library outside ``openenv_hub/runtimes/``
(nor of the CLI) imports or builds a runtime's provider or runtime class itself; each starts a
server through :mod:`openenv_hub.runtimes.registry` by name. And every registered runtime has an
inventory, so ``openenv ps`` lists and ``openenv stop`` stops what it started."""

from __future__ import annotations

import ast
import textwrap

import pytest
from import_graph import LIBRARY, REPO, modules

RUNTIMES = LIBRARY / "runtimes"
CLI = REPO / "cli" / "openenv_hub_cli"
#: Old import paths of the runtimes' modules, kept with a deprecation warning.
SHIMS = LIBRARY / "providers"
#: Classes of runtimes/ that look like providers but no runtime starts: a container that
#: commands run in (Harbor tasks), not a server.
NOT_SERVERS = {"DockerSandbox"}
#: Runtimes that start nothing that runs on: the space runtime points at the Space's own app.
STARTS_NOTHING = {"space"}


def _class_bases(tree: ast.Module) -> dict[str, set[str]]:
    return {
        node.name: {base.id for base in node.bases if isinstance(base, ast.Name)}
        | {base.attr for base in node.bases if isinstance(base, ast.Attribute)}
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


def runtime_classes() -> set[str]:
    """The provider and runtime classes defined under openenv_hub/runtimes/ (subclasses, at any
    depth, of ``StopsOnExit`` or ``RuntimeBase``)."""
    bases: dict[str, set[str]] = {}
    for path in RUNTIMES.rglob("*.py"):
        bases |= _class_bases(ast.parse(path.read_text(encoding="utf-8")))
    found = {"StopsOnExit", "RuntimeBase"}
    while True:
        more = {name for name, of in bases.items() if of & found} - found
        if not more:
            return found - {"StopsOnExit", "RuntimeBase"} - NOT_SERVERS
        found |= more


def _is_runtimes_module(name: str) -> bool:
    return any(
        name == package or name.startswith(package + ".")
        for package in ("openenv_hub.runtimes", "openenv_hub.providers")
    )


def direct_uses(source: str, classes: set[str]) -> list[tuple[int, str]]:
    """``(line, what)`` for each import of one of ``classes`` from the runtimes' modules, and
    each use of one through a runtimes module imported whole (``local.LocalProcessProvider``)."""
    tree = ast.parse(source)
    found = []
    module_aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _is_runtimes_module(node.module):
                continue
            for alias in node.names:
                if alias.name in classes:
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
                else:  # perhaps a module: its attributes are checked below
                    module_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_runtimes_module(alias.name):
                    module_aliases.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in classes:
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in module_aliases:
                found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_classes_looked_for_are_the_runtimes_and_their_providers() -> None:
    classes = runtime_classes()
    assert {"LocalProcessProvider", "DockerProvider", "JobsProvider", "KubernetesProvider"} <= (
        classes
    )
    assert {"UvProvider", "LocalRuntime", "DockerRuntime", "RayProvider"} <= classes
    assert "DockerSandbox" not in classes


@pytest.mark.parametrize(
    "source",
    [
        "from openenv_hub.runtimes.local import LocalProcessProvider\n",
        "def f():\n    from openenv_hub.runtimes.docker import DockerProvider as D\n",
        "from openenv_hub.runtimes import kubernetes\nkubernetes.KubernetesProvider.start([])\n",
        "import openenv_hub.runtimes.jobs\nopenenv_hub.runtimes.jobs.JobsProvider.from_hub('a/b')\n",
        "from openenv_hub.providers.local import LocalProcessProvider\n",
    ],
)
def test_the_check_sees_each_way_of_reaching_a_provider_class(source: str) -> None:
    assert direct_uses(source, runtime_classes()), source


def test_the_check_leaves_the_registry_and_same_named_classes_alone() -> None:
    source = textwrap.dedent(
        """
        from openenv_hub.runtimes import Provider, start, get_runtime
        class SpaceRuntime: ...
        server = start("local", "folder", "envs/echo_env")
        """
    )
    assert direct_uses(source, runtime_classes()) == []


def test_no_module_outside_the_runtimes_builds_a_provider_or_runtime_itself() -> None:
    classes = runtime_classes()
    found = []
    for package in (LIBRARY, CLI):
        for module in modules(package).values():
            if module.path.is_relative_to(RUNTIMES) or module.path.is_relative_to(SHIMS):
                continue
            source = module.path.read_text(encoding="utf-8")
            for line, what in direct_uses(source, classes):
                found.append(f"{module.path.relative_to(REPO)}:{line} {what}")
    assert found == [], (
        "start servers through the registry (openenv_hub.runtimes.start/starter/get_runtime) "
        "and type them as Provider:\n" + "\n".join(found)
    )


def test_every_registered_runtime_has_an_inventory_that_ps_and_stop_ask() -> None:
    from openenv_hub.runtimes import get_runtime, inventory_of, runtime_names
    from openenv_hub.runtimes.everywhere import inventories

    asked = {name for _, names in inventories() for name in names}
    for name in runtime_names():
        if name in STARTS_NOTHING:
            assert get_runtime(name).inventory == "" and inventory_of(name) is None
            continue
        inventory = inventory_of(name)
        assert inventory is not None, f"the {name} runtime names no inventory"
        assert isinstance(inventory.lists, str) and inventory.lists
        for method in ("running", "remove", "asked_by_default"):
            assert callable(getattr(inventory, method)), (name, method)
        assert name in asked, f"openenv ps does not ask the inventory of {name}"
    assert set(runtime_names()) - STARTS_NOTHING == asked
