"""A Space that is not an environment (``kind: app`` in openenv.yaml, like spaces/catalog):
``openenv validate`` gives it the app checks, ``openenv push`` publishes it without the
environment checks and never tags it ``openenv``; an app card that does carry the tag is
refused before anything is sent."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import REPO, space_files, unique_repo

from openenv_hub.errors import EnvironmentValidationError, ManifestError
from openenv_hub.hub import push
from openenv_hub.hub._card import fix_card
from openenv_hub.model.manifest import parse_manifest
from openenv_hub.testing.pytest_plugin import HubEnv
from openenv_hub.validation import validate_path

CATALOG = REPO / "spaces" / "catalog"


@pytest.fixture
def app_copy(tmp_path: Path) -> Path:
    """spaces/catalog, copied (an app Space as the project ships one)."""
    target = tmp_path / "catalog"
    shutil.copytree(CATALOG, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_validate_gives_an_app_the_app_checks(cli: Callable[..., CliResult]) -> None:
    result = cli("validate", CATALOG, "--level", "docker")
    assert result.code == 0, result.text
    for name in ("manifest", "app_files", "space_card", "dockerfile", "import_checks"):
        assert name in result.out
    assert "layout" not in result.out and "pyproject" not in result.out
    assert "not tagged openenv (an app)" in result.out
    assert "an app Space (kind: app) serves no environment" in result.out


def test_push_publishes_an_app_without_the_openenv_tag(
    hub_env: HubEnv, app_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "catalog")
    result = cli("push", app_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert "Space card:" not in result.out  # nothing to correct: no base_path, no tag added
    assert "Install:" not in result.out  # an app installs nothing
    remote = space_files(hub_env, repo_id)
    assert remote["README.md"] == (CATALOG / "README.md").read_bytes()
    assert {"Dockerfile", "requirements.txt", "openenv_catalog/app.py"} <= set(remote)
    assert any(name.startswith(".openenv/wheels/openenv_hub-") for name in remote)
    info = hub_env.api("alice").space_info(repo_id)
    assert not {"openenv", "rl-environment"} & set(info.tags or []) and info.sdk == "docker"
    variables = hub_env.api("alice").get_space_variables(repo_id)
    assert variables["CATALOG_TAGS"].value == "openenv,rl-environment"


@pytest.mark.parametrize("tag", ["openenv", "rl-environment"])
def test_an_app_card_with_an_environment_tag_is_refused_before_anything_is_sent(
    hub_env: HubEnv, app_copy: Path, tag: str
) -> None:
    readme = app_copy / "README.md"
    readme.write_text(readme.read_text().replace("sdk: docker\n", f"sdk: docker\ntags: [{tag}]\n"))
    [card] = [r for r in validate_path(app_copy, level="static") if r.name == "space_card"]
    assert not card.ok and f"tags include '{tag}', but this Space is an app" in card.message
    assert "catalogs list Spaces tagged with them as environments" in card.hint
    repo_id = unique_repo(hub_env, "tagged-app")
    with pytest.raises(EnvironmentValidationError):
        push(app_copy, repo_id, bundle_wheel=False)
    assert not hub_env.api("alice").repo_exists(repo_id, repo_type="space")


def test_an_app_card_gets_sdk_and_port_only() -> None:
    text, changes = fix_card("# Dashboard\n", port=7860, title="Dash", environment=False)
    assert changes == ["front matter: added (the README had none)"]
    assert "app_port: 7860" in text and "base_path" not in text and "openenv" not in text
    fixed, changes = fix_card("---\nsdk: gradio\n---\n", port=7860, title="D", environment=False)
    assert changes == ["sdk: 'gradio' -> 'docker'", "app_port: added (7860)"]
    assert "tags" not in fixed


def test_an_unknown_kind_names_the_field() -> None:
    with pytest.raises(ManifestError) as raised:
        parse_manifest("name: dash\nkind: dashboard\n")
    assert raised.value.field == "kind" and raised.value.line == 2
    assert "'environment'" in str(raised.value) and "'app'" in str(raised.value)
