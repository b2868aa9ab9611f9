"""Hub messages that used to mislead: a read-only token is told to use a write token (never to
push under another name, which it cannot either), and ``openenv whoami`` shows each organisation
with the role the Hub gives, never a ``(?)``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cli_runner import CliResult
from hub_support import unique_repo

from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv


def test_a_read_only_token_is_told_to_use_a_write_token(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "echo_env_mine")
    push(echo_copy, repo_id, bundle_wheel=False)  # the folder remembers it, as after a push
    hub_env.login("alice", "read")
    result = cli("push", echo_copy)
    assert result.code == 1, result.text
    assert "read-only token of alice" in result.err
    assert "Use a write token" in result.err
    assert "--repo-id" not in result.err  # no other name helps a read-only token
    result = cli("push", echo_copy, "--repo-id", unique_repo(hub_env, "other"))
    assert result.code == 1 and "Use a write token" in result.err and "--repo-id" not in result.err


def test_whoami_shows_each_organisation_with_its_role(
    hub_env: HubEnv, tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    hub_env.login("alice")
    result = cli("whoami", tmp_path)
    assert result.code == 0, result.text
    assert "Organisations: org (write)" in result.out
    assert "(?)" not in result.out
