"""``fork`` and ``pull`` against LocalHub."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import space_files, unique_repo

from openenv_hub.hub import fork, pull, push
from openenv_hub.testing.pytest_plugin import HubEnv


@pytest.fixture
def published(hub_env: HubEnv, echo_copy: Path) -> str:
    repo_id = unique_repo(hub_env, "src")
    push(
        echo_copy,
        repo_id,
        variables={"LEVEL": "easy"},
        secrets={"KEY": "k"},
        version="0.1.0",
        bundle_wheel=False,
    )
    return repo_id


def test_fork_copies_files_variables_and_visibility(
    hub_env: HubEnv, published: str, cli: Callable[..., CliResult]
) -> None:
    target = unique_repo(hub_env, "fork", "org")
    result = cli(
        "fork", published, "--repo-id", target, "--private", "-e", "EXTRA=1",
        "--secret", "TOKEN=fork-secret-value",
    )  # fmt: skip
    assert result.code == 0, result.text
    assert f"-> {target} (private)" in result.out
    assert "fork-secret-value" not in result.text
    api = hub_env.api("alice")
    assert space_files(hub_env, target) == space_files(hub_env, published)
    assert api.space_info(target).private
    assert {k: v.value for k, v in api.get_space_variables(target).items()} == {
        "LEVEL": "easy",
        "EXTRA": "1",
    }
    assert set(api.get_space_secrets(target)) == {"TOKEN"}  # the source's secrets stay behind
    assert [t.name for t in api.list_repo_refs(target, repo_type="space").tags] == ["0.1.0"]


def test_fork_defaults_to_your_namespace_and_the_source_visibility(
    hub_env: HubEnv, published: str
) -> None:
    hub_env.login("bob")
    result = fork(published)
    assert result.repo_id == f"bob/{published.split('/')[1]}"
    assert not result.private
    assert result.url == f"{hub_env.endpoint}/spaces/{result.repo_id}"


def test_fork_into_an_existing_space_is_a_conflict(
    hub_env: HubEnv, published: str, cli: Callable[..., CliResult]
) -> None:
    result = cli("fork", published, "--repo-id", published)
    assert result.code == 1 and "Conflict" in result.err and "--repo-id" in result.err


def test_pull_makes_an_editable_copy(
    hub_env: HubEnv, published: str, echo_copy: Path, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    (echo_copy / "LATER.md").write_text("after 0.1.0\n", encoding="utf-8")
    push(echo_copy, published, bundle_wheel=False)
    result = cli("pull", published, tmp_path / "copy")
    assert result.code == 0, result.text
    copy = tmp_path / "copy"
    files = {p.relative_to(copy).as_posix(): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    link = json.loads(files.pop(".openenv/space.json"))  # where a push of the copy goes
    assert link == {"endpoint": hub_env.endpoint, "pulled_from": published}
    assert b"space.json" in files.pop(".openenv/.gitignore")  # and git does not commit it
    assert files == space_files(hub_env, published)
    old = pull(published, tmp_path / "old", revision="0.1.0")
    assert not (old / "LATER.md").exists() and (old / "openenv.yaml").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy", "echo_env", "old"]  # no leftovers


def test_pull_into_an_empty_folder_and_by_default_into_the_name(
    hub_env: HubEnv, published: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "empty").mkdir()
    assert (pull(published, tmp_path / "empty") / "openenv.yaml").is_file()
    monkeypatch.chdir(tmp_path)
    assert pull(published) == (tmp_path / published.split("/")[1]).resolve()
