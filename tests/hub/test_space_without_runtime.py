"""A LocalHub that runs no Space apps (``--no-spaces``, ``run_spaces=False``) reports its Spaces
as the Hub reports a Space whose app is not running: ``STOPPED``, with the reason, never
``RUNNING``. ``openenv push --wait`` says so and fails; ``from_hub`` names the reason; and a
WebSocket to the Space's app is refused with the same explanation as HTTP, which the client
shows. A Space given the URL of an app started for it runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cli_runner import CliResult
from huggingface_hub import HfApi
from serving import ServerThread

from openenv_hub import GenericEnvClient
from openenv_hub.errors import ConnectError, SpaceNotRunningError
from openenv_hub.localhub import LocalHub

REASON = "its Space runtime is off"


@pytest.fixture
def no_spaces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    """A LocalHub started as ``--no-spaces`` starts it, the environment pointed at it."""
    with LocalHub(data_dir=tmp_path / "data", run_spaces=False) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
        monkeypatch.setenv("HF_TOKEN", hub.token_for("alice"))
        yield hub


def _space(hub: LocalHub, repo_id: str) -> HfApi:
    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    api.create_repo(repo_id, repo_type="space", space_sdk="docker")
    return api


def test_push_wait_reports_the_space_stopped_and_why(
    no_spaces: LocalHub, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    result = cli("push", echo_copy, "--repo-id", "alice/echo_env2", "--wait")
    assert result.code != 0, result.text
    assert "Space alice/echo_env2: STOPPED" in result.err
    assert "RUNNING" not in result.text and "Running alice/echo_env2" not in result.out
    assert REASON in result.err and "set_space_runtime" in result.err


def test_its_stage_is_stopped_until_an_app_is_registered(
    no_spaces: LocalHub, echo_server: ServerThread
) -> None:
    api = _space(no_spaces, "alice/echo")
    runtime = api.get_space_runtime("alice/echo")
    assert runtime.stage == "STOPPED" and REASON in runtime.raw["errorMessage"]
    assert api.space_info("alice/echo").runtime.stage == "STOPPED"  # type: ignore[union-attr]
    no_spaces.set_space_runtime("alice/echo", host=echo_server.url)
    runtime = api.get_space_runtime("alice/echo")
    assert runtime.stage == "RUNNING" and "errorMessage" not in runtime.raw
    api.duplicate_repo("alice/echo", "alice/echo-copy", repo_type="space")
    assert api.get_space_runtime("alice/echo-copy").stage == "STOPPED"  # a copy runs nowhere
    no_spaces.set_space_runtime("alice/echo-copy", stage="BUILDING", then=["RUNNING"])
    assert api.get_space_runtime("alice/echo-copy").stage == "BUILDING"  # scripts still work


def test_from_hub_names_the_reason(no_spaces: LocalHub) -> None:
    _space(no_spaces, "alice/echo")
    with pytest.raises(SpaceNotRunningError) as stopped:
        GenericEnvClient.from_hub("alice/echo")
    assert "stage STOPPED" in str(stopped.value) and REASON in stopped.value.reason


async def test_a_websocket_to_its_app_is_refused_with_the_reason_http_gives(
    no_spaces: LocalHub,
) -> None:
    _space(no_spaces, "alice/echo")
    app_url = f"{no_spaces.endpoint}/_localhub/apps/alice/echo"
    async with httpx.AsyncClient() as http:
        answer = await http.get(f"{app_url}/health")
    assert answer.status_code == 503 and REASON in answer.json()["error"]
    with pytest.raises(ConnectError) as refused:
        async with GenericEnvClient(base_url=app_url) as env:
            await env.reset()
    message = str(refused.value)
    assert "the server answered HTTP 503" in message and REASON in message
    assert refused.value.status_code == 503
