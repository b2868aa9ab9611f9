"""Two rules of the session core, on every transport: reset comes first, and a reward outside the
environment's declared range is flagged (openenv_hub/model/episode_rules.py)."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import httpx
import pytest
from sample_envs import Echoed, Message
from websockets.sync.client import connect

from openenv_hub import Environment, GenericEnvClient, State, create_app
from openenv_hub.errors import ConfigurationError, EnvironmentExecutionError, ResetRequiredError
from openenv_hub.model.tools import MCPEnvironment, tool
from openenv_hub.rubrics import rubric
from openenv_hub.types import Observation


class NeedsReset(Environment[Message, Echoed, State]):
    """Like the README's first environment: its state exists only after a reset."""

    reward_range = (0.0, 1.0)

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Echoed:
        self._state = State(episode_id=episode_id or "started")
        return Echoed(echoed_message="ready")

    def step(self, action: Message, timeout_s: float | None = None, **kw: Any) -> Echoed:
        self._state.step_count += 1  # AttributeError without a reset
        reward = float(action.message) if action.message[:1].isdigit() else 0.0
        if action.message == "nan":
            reward = math.nan
        return Echoed(echoed_message=action.message, reward=reward)

    @property
    def state(self) -> State:
        return self._state


class NoResetNeeded(NeedsReset):
    ALLOWS_STEP_BEFORE_RESET = True

    def __init__(self) -> None:
        self._state = State(episode_id="from the constructor")


@rubric(range=(0, 1))
def claimed(action: Any) -> float:
    """Whatever the tool call claims: a rubric that trusts the agent."""
    return float(getattr(action, "arguments", {}).get("score", 0.0))


class Tools(MCPEnvironment):
    rubric = claimed

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        super().reset(seed=seed, episode_id=episode_id)
        return Observation()

    @tool
    def claim(self, score: float) -> float:
        """Claim a score."""
        return score


def ws(server: Any) -> Any:
    return connect(server.url.replace("http", "ws") + "/ws", open_timeout=5)


def ask(socket: Any, message: dict[str, Any]) -> dict[str, Any]:
    socket.send(json.dumps(message))
    return json.loads(socket.recv(timeout=10))  # type: ignore[no-any-return]


def test_a_step_or_state_before_reset_gets_a_typed_error_and_the_session_goes_on(
    serve: Any,
) -> None:
    server = serve(create_app(NeedsReset, Message, Echoed))
    with ws(server) as s:
        for message in ({"type": "step", "data": {"message": "1"}}, {"type": "state"}):
            error = ask(s, message)["data"]
            assert error["code"] == "EXECUTION_ERROR" and error["reason"] == "reset_required"
            assert "call reset() first" in error["message"]
        assert ask(s, {"type": "reset"})["type"] == "observation"
        assert ask(s, {"type": "step", "data": {"message": "1"}})["data"]["reward"] == 1.0
        assert ask(s, {"type": "state"})["data"]["step_count"] == 1


async def test_the_client_raises_reset_required_an_execution_error(serve: Any) -> None:
    server = serve(create_app(NeedsReset, Message, Echoed))
    async with GenericEnvClient(server.url) as env:
        with pytest.raises(ResetRequiredError, match=r"step\(\) before reset\(\)") as caught:
            await env.step({"message": "1"})
        assert isinstance(caught.value, EnvironmentExecutionError)
        with pytest.raises(ResetRequiredError, match=r"state\(\) before reset\(\)"):
            await env.state()
        await env.reset()
        assert (await env.step({"message": "0.5"})).reward == 0.5


def test_an_http_session_is_refused_with_409_until_it_is_reset(serve: Any) -> None:
    server = serve(create_app(NeedsReset, Message, Echoed))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        created = {"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}
        headers = {"X-OpenEnv-Session": client.post("/mcp", json=created).json()["result"]["session_id"]}  # fmt: skip
        refused = client.post("/step", json={"action": {"message": "1"}}, headers=headers)
        assert refused.status_code == 409
        assert refused.json()["code"] == "EXECUTION_ERROR"
        assert refused.json()["reason"] == "reset_required"
        assert client.get("/state", headers=headers).status_code == 409
        assert client.post("/reset", json={}, headers=headers).status_code == 200
        assert (
            client.post("/step", json={"action": {"message": "1"}}, headers=headers).json()[
                "reward"
            ]
            == 1.0
        )


def test_a_stateless_call_has_its_fresh_environment_reset_first(serve: Any) -> None:
    server = serve(create_app(NeedsReset, Message, Echoed))
    with httpx.Client(base_url=server.url, timeout=10) as client:
        stepped = client.post("/step", json={"action": {"message": "1"}})
        assert stepped.status_code == 200 and stepped.json()["reward"] == 1.0
        state = client.get("/state")
        assert state.status_code == 200
        assert state.json() == {"episode_id": "started", "step_count": 0}


def test_an_environment_may_opt_out(serve: Any) -> None:
    server = serve(create_app(NoResetNeeded, Message, Echoed))
    with ws(server) as s:
        assert ask(s, {"type": "state"})["data"]["episode_id"] == "from the constructor"
        assert ask(s, {"type": "step", "data": {"message": "1"}})["data"]["reward"] == 1.0
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.get("/state").json()["episode_id"] == "from the constructor"


def test_tools_are_listed_before_reset_but_not_called(serve: Any) -> None:
    server = serve(create_app(Tools))
    with ws(server) as s:
        listed = ask(s, {"type": "step", "data": {"type": "list_tools"}})
        assert [t["name"] for t in listed["data"]["observation"]["tools"]] == ["claim"]
        call = {"type": "call_tool", "tool_name": "claim", "arguments": {"score": 1}}
        assert ask(s, {"type": "step", "data": call})["data"]["reason"] == "reset_required"


def _flagged(payload: dict[str, Any]) -> bool:
    top = payload.get("metadata") or {}
    inner = payload["observation"].get("metadata") or {}
    assert top.get("reward_out_of_range") == inner.get("reward_out_of_range")
    return bool(top.get("reward_out_of_range"))


def test_a_reward_outside_the_declared_range_is_flagged_and_logged_once(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(create_app(NeedsReset, Message, Echoed, env_name="needs_reset"))
    assert httpx.get(server.url + "/metadata").json()["reward_range"] == [0.0, 1.0]
    with caplog.at_level(logging.WARNING, logger="openenv_hub.episodes"), ws(server) as s:
        ask(s, {"type": "reset"})
        assert not _flagged(ask(s, {"type": "step", "data": {"message": "1"}})["data"])
        for message in ("2", "nan", "5"):
            reply = ask(s, {"type": "step", "data": {"message": message}})["data"]
            assert _flagged(reply), message
        stateless = httpx.post(server.url + "/step", json={"action": {"message": "3"}}).json()
        assert _flagged(stateless) and stateless["reward"] == 3.0
    warnings = [r.getMessage() for r in caplog.records if "declared range" in r.getMessage()]
    assert len(warnings) == 1 and "needs_reset" in warnings[0] and "[0, 1]" in warnings[0]


def test_a_rubric_score_outside_its_range_is_flagged_on_tool_calls(serve: Any) -> None:
    server = serve(create_app(Tools))
    assert httpx.get(server.url + "/metadata").json()["reward_range"] == [0.0, 1.0]
    call = {"type": "call_tool", "tool_name": "claim", "arguments": {"score": 7}}
    with ws(server) as s:
        ask(s, {"type": "reset"})
        reply = ask(s, {"type": "step", "data": call})["data"]
        assert reply["reward"] == 7.0 and _flagged(reply)
    over_http = httpx.post(server.url + "/step", json={"action": call}).json()
    assert over_http["reward"] == 7.0 and _flagged(over_http)
    fair = {**call, "arguments": {"score": 0.5}}
    assert not _flagged(httpx.post(server.url + "/step", json={"action": fair}).json())


def test_an_environment_that_declares_nothing_publishes_no_bounds(serve: Any) -> None:
    class Unbounded(NeedsReset):
        reward_range = None

    server = serve(create_app(Unbounded, Message, Echoed))
    assert httpx.get(server.url + "/metadata").json()["reward_range"] == [None, None]
    reply = httpx.post(server.url + "/step", json={"action": {"message": "1000"}}).json()
    assert reply["reward"] == 1000.0 and not _flagged(reply)
    infinite = httpx.post(server.url + "/step", json={"action": {"message": "1e400"}}).json()
    assert _flagged(infinite)  # no bound is no licence for an infinite reward


def test_a_range_that_is_no_range_fails_when_the_app_is_made() -> None:
    class Backwards(NeedsReset):
        reward_range = (1.0, 0.0)

    with pytest.raises(ConfigurationError, match=r"Backwards\.reward_range.*is empty"):
        create_app(Backwards, Message, Echoed)
