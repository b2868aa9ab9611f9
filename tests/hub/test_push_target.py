"""Where a push goes: back to the Space a folder was pulled from or last pushed to, said before
anything is sent; ``openenv whoami`` tells who the token is and where a push would go."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import space_files, unique_repo

from openenv_hub.hub import pull, push, push_target, read_link
from openenv_hub.testing.pytest_plugin import HubEnv

LINK = ".openenv/space.json"


def _without_link(files: dict[str, bytes]) -> dict[str, bytes]:
    return {name: data for name, data in files.items() if name != LINK}


def test_fork_pull_edit_push_updates_the_fork_and_leaves_the_source_alone(
    hub_env: HubEnv,
    init_env: Path,
    tmp_path: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name = init_env.name
    source = f"alice/{name}"  # what a push of a folder named by the manifest used to pick
    assert cli("push", init_env, "--repo-id", source).code == 0
    before = space_files(hub_env, source)
    mine = f"alice/{name}_mine"
    forked = cli("fork", source, "--repo-id", mine)
    assert forked.code == 0, forked.text
    assert f"(it goes to {mine})" in forked.out
    pulled = cli("pull", mine, tmp_path / "my_copy")
    assert pulled.code == 0, pulled.text
    assert f"openenv push   (goes back to {mine}" in pulled.out
    copy = tmp_path / "my_copy"
    (copy / "NOTES.md").write_text("my change\n", encoding="utf-8")
    (copy / "keep.log").unlink()
    monkeypatch.chdir(copy)
    result = cli("push")
    assert result.code == 0, result.text
    announced = f"Pushing my_copy to {mine} (the Space this folder was pulled from)"
    assert announced in result.out
    assert result.out.index(announced) < result.out.index("Pushed")
    assert space_files(hub_env, source) == before
    after = space_files(hub_env, mine)
    assert after["NOTES.md"] == b"my change\n" and "keep.log" not in after
    assert LINK not in after
    assert read_link(copy) is not None and read_link(copy).pushed_to == mine  # type: ignore[union-attr]


def test_a_push_remembers_where_it_went_and_the_link_is_never_uploaded(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    repo_id = unique_repo(hub_env, "again")
    first = push(echo_copy, repo_id, bundle_wheel=False)
    assert first.target is not None and first.target.reason == "named with --repo-id"
    assert json.loads((echo_copy / LINK).read_text())["pushed_to"] == repo_id
    (echo_copy / "LATER.md").write_text("later\n", encoding="utf-8")
    second = push(echo_copy, bundle_wheel=False)  # not alice/echo_env, the manifest's name
    assert second.repo_id == repo_id
    assert second.target is not None
    assert second.target.reason == "the Space this folder was last pushed to"
    files = space_files(hub_env, repo_id)
    assert "LATER.md" in files and LINK not in files


def test_a_folder_from_another_hub_needs_a_repo_id(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    link = echo_copy / LINK
    link.parent.mkdir()
    link.write_text(json.dumps({"endpoint": "https://hub.example", "pulled_from": "carol/echo"}))
    refused = cli("push", echo_copy)
    assert refused.code == 1
    assert "belongs to the Space carol/echo on https://hub.example" in refused.err
    assert "--repo-id alice/echo_env" in refused.err and "nothing was sent" in refused.err
    repo_id = unique_repo(hub_env, "moved")
    done = cli("push", echo_copy, "--repo-id", repo_id)
    assert done.code == 0, done.text
    assert "named with --repo-id; this folder remembers carol/echo on https://hub.example" in (
        done.out
    )
    assert push_target(echo_copy).repo_id == repo_id  # remembered on this Hub from now on


def test_a_space_pulled_from_someone_else_is_not_pushed_back_without_a_repo_id(
    hub_env: HubEnv, echo_copy: Path, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "theirs")
    push(echo_copy, repo_id, bundle_wheel=False)
    hub_env.login("bob")
    copy = pull(repo_id, tmp_path / "copy")
    result = cli("push", copy)
    assert result.code == 1
    assert f"{repo_id} is the Space this folder was pulled from" in result.err
    assert f"--repo-id bob/{repo_id.split('/')[1]}" in result.err
    assert f"openenv fork {repo_id}" in result.err


def test_whoami_names_the_account_and_the_push_target_but_never_the_token(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    token = hub_env.login("bob")
    plain = cli("whoami", echo_copy.parent)
    assert plain.code == 0, plain.text
    assert f"bob on {hub_env.endpoint} (from $HF_TOKEN" in plain.out
    assert "not an environment folder" in plain.out
    repo_id = unique_repo(hub_env, "mine", "bob")
    push(echo_copy, repo_id, bundle_wheel=False)
    there = cli("whoami", echo_copy)
    assert f"goes to {repo_id} (the Space this folder was last pushed to)" in there.out
    assert token not in plain.text + there.text
    hub_env.logout()
    anonymous = cli("whoami")
    assert anonymous.code == 1 and "No Hugging Face token" in anonymous.err
