"""``EnvClient.from_hub``: connect to a Space's running app (LocalHub reports where it runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from echo_env import CallToolAction, EchoEnv
from hub_support import unique_repo

from openenv_hub.errors import RevisionNotServedError, SpaceNotFoundError, SpaceNotRunningError
from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv


@pytest.fixture
def running_space(hub_env: HubEnv, echo_copy: Path, echo_server: Any) -> str:
    """The echo env pushed to LocalHub, its app served locally and registered as the Space's."""
    repo_id = unique_repo(hub_env, "live")
    push(echo_copy, repo_id, version="0.1.0", bundle_wheel=False)
    hub_env.hub.set_space_runtime(repo_id, stage="RUNNING", host=echo_server.url)
    return repo_id


async def test_from_hub_connects_to_the_running_space(running_space: str, echo_server: Any) -> None:
    env = EchoEnv.from_hub(running_space)
    assert isinstance(env, EchoEnv) and env.base_url == echo_server.url
    async with env:
        await env.reset()
        result = await env.step(
            CallToolAction(tool_name="echo_message", arguments={"message": "Hi"})
        )
        assert result.observation.result["data"] == "Hi"


def test_from_hub_sync_with_client_options(running_space: str) -> None:
    env = EchoEnv.from_hub(running_space, revision="0.1.0", message_timeout_s=5.0)
    assert env.options.message_timeout_s == 5.0
    with env.sync() as sync_env:
        sync_env.reset()
        assert sync_env.call_tool("echo_with_length", message="Hi") == {
            "message": "Hi",
            "length": 2,
        }


def test_an_older_revision_is_not_what_the_space_runs(
    hub_env: HubEnv, running_space: str, echo_copy: Path
) -> None:
    (echo_copy / "LATER.md").write_text("x\n", encoding="utf-8")
    push(echo_copy, running_space, bundle_wheel=False)
    with pytest.raises(RevisionNotServedError) as info:
        EchoEnv.from_hub(running_space, revision="0.1.0")
    assert "local=True" in info.value.hint


def test_a_failed_space_is_reported(hub_env: HubEnv, running_space: str) -> None:
    hub_env.hub.set_space_runtime(running_space, stage="RUNTIME_ERROR")
    with pytest.raises(SpaceNotRunningError) as info:
        EchoEnv.from_hub(running_space)
    assert info.value.stage == "RUNTIME_ERROR" and "logs" in info.value.hint


def test_unknown_space(hub_env: HubEnv) -> None:
    with pytest.raises(SpaceNotFoundError):
        EchoEnv.from_hub("alice/does-not-exist")
