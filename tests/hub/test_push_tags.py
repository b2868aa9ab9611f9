"""``openenv push`` tags what it publishes as an environment: ``openenv`` and ``rl-environment``
on every environment's card, and the library's tag (``harbor``, ``verifiers``) on one imported
from it; a Space card and a dataset card alike, against LocalHub."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cli_runner import CliResult
from hub_support import unique_repo

from openenv_hub.hub import environment_tags, push, push_dataset
from openenv_hub.importers import import_harbor
from openenv_hub.testing.pytest_plugin import HubEnv

TASKS = Path(__file__).parents[1] / "importers" / "harbor_tasks"


def test_an_environment_card_gets_both_tags_and_says_so(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    readme = echo_copy / "README.md"
    readme.write_text(readme.read_text().replace("  - rl-environment\n", ""))
    repo_id = unique_repo(hub_env, "tagged")
    done = cli("push", echo_copy, "--repo-id", repo_id)
    assert done.code == 0, done.text
    assert "Space card: tags: added 'rl-environment'" in done.out
    tags = hub_env.api().space_info(repo_id).tags or []
    assert {"openenv", "rl-environment"} <= set(tags) and "harbor" not in tags


def test_an_imported_environment_carries_its_library_tag_on_a_space_and_a_dataset(
    hub_env: HubEnv, tmp_path: Path
) -> None:
    folder = import_harbor(TASKS, tmp_path / "harbor_tasks").path
    readme = folder / "README.md"
    readme.write_text(readme.read_text().replace("  - harbor\n", ""))  # push puts it back
    space = unique_repo(hub_env, "harbor")
    result = push(folder, space, bundle_wheel=False)
    assert "tags: added 'harbor'" in result.plan.card_changes
    assert {"openenv", "rl-environment", "harbor"} <= set(hub_env.api().space_info(space).tags)

    dataset = unique_repo(hub_env, "harbor-set")
    published = push_dataset(folder, dataset)
    assert published.tags == ["openenv", "rl-environment", "harbor"]
    info = hub_env.api().dataset_info(dataset)
    assert info.card_data is not None
    assert info.card_data.tags == ["openenv", "rl-environment", "harbor"]


def test_only_the_libraries_environments_are_imported_from_are_added() -> None:
    assert environment_tags(["openenv", "mcp", "verifiers"]) == [
        "openenv",
        "rl-environment",
        "verifiers",
    ]
    assert environment_tags([]) == ["openenv", "rl-environment"]
