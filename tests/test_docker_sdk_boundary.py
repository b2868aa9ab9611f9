"""docs/architecture.md: "docker: the one place that talks to a Docker engine". No module of the
library or the CLI outside ``openenv_hub/docker/`` imports the ``docker`` SDK, at the top, inside
a function or under ``if TYPE_CHECKING:`` (its types, errors and specs are named by
:mod:`openenv_hub.docker`)."""

from __future__ import annotations

from pathlib import Path

from import_graph import LIBRARY, REPO, Module, imported_names, modules

DOCKER_PACKAGE = LIBRARY / "docker"


def sdk_imports(package: Path) -> list[str]:
    """``path:line name`` of each import of the SDK by a module of ``package`` outside
    ``openenv_hub/docker/``."""
    found = []
    for module in modules(package).values():
        if module.path.is_relative_to(DOCKER_PACKAGE):
            continue
        for name, line in imported_names(module):
            if name == "docker" or name.startswith("docker."):
                found.append(f"{module.path.relative_to(REPO)}:{line} {name}")
    return found


def test_no_module_outside_the_docker_package_imports_the_docker_sdk() -> None:
    found = sdk_imports(LIBRARY) + sdk_imports(REPO / "cli" / "openenv_hub_cli")
    assert found == [], "import the SDK's names from openenv_hub.docker instead:\n" + "\n".join(
        found
    )


def test_the_check_sees_an_import_inside_a_function_and_under_type_checking(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "uses.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from docker.models.containers import Container\n"
        "def f():\n    import docker\n    return docker.from_env()\n"
    )
    seen = [
        name
        for module in modules(package).values()
        for name, _ in imported_names(Module(module.name, module.path, module.is_package))
    ]
    assert "docker.models.containers.Container" in seen and "docker" in seen
