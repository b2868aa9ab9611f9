"""An agent that tries to raise its own reward, through the real server: unknown and reserved
tools, arguments of the wrong type or none at all, oversized messages, rewards claimed in the
action, tool calls before reset and after many steps. Every reward stays in [0, 1], the range
the echo rubric declares, and every refusal is a typed error that says what was wrong."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from echo_env import CallToolAction, EchoEnv
from echo_env.server.app import app

from openenv_hub import GenericEnvClient
from openenv_hub.errors import ActionValidationError, ToolCallError

LOW, HIGH = 0.0, 1.0


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def in_range(reward: Any, metadata: Any = None) -> float:
    assert reward is not None and LOW <= reward <= HIGH, reward
    assert not (metadata or {}).get("reward_out_of_range")
    return float(reward)


def test_the_declared_range_is_published(base_url: str) -> None:
    assert httpx.get(base_url + "/metadata").json()["reward_range"] == [LOW, HIGH]


def test_tools_need_no_reset_and_earn_no_more_before_one(base_url: str) -> None:
    """The echo environment opts out of the reset rule (ALLOWS_STEP_BEFORE_RESET)."""
    with EchoEnv(base_url=base_url).sync() as env:
        assert env.call_tool("echo_message", message="before any reset") == "before any reset"
        result = env.step(CallToolAction(tool_name="echo_message", arguments={"message": "x"}))
        in_range(result.reward, result.metadata)
        assert env.state().step_count == 2


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"message": 123},
        {"message": None},
        {"message": ["a", "b"]},
        {"message": {"text": "a" * 100}},
        {"message": "hi", "reward": 100},
        {"msg": "hi"},
        {f"k{i}": i for i in range(5_000)},
    ],
    ids=["none", "int", "null", "list", "dict", "claimed-reward", "misspelt", "5000-keys"],
)
def test_arguments_a_tool_does_not_take_earn_nothing_for_the_call(
    base_url: str, arguments: dict[str, Any]
) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset()
        action = {"type": "call_tool", "tool_name": "echo_message", "arguments": arguments}
        result = env.step(action)
        assert result.observation["error"]["error_type"] == "invalid_args"
        breakdown = result.metadata["reward_breakdown"]
        assert breakdown["tool_succeeded"] == 0.0
        in_range(result.reward, result.metadata)


@pytest.mark.parametrize("name", ["no_such_tool", "reset", "step", "state", "close", "x" * 10_000])
def test_unknown_and_reserved_tools_earn_nothing_for_the_call(base_url: str, name: str) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset()
        long_message = {"message": "m" * 100}
        result = env.step({"type": "call_tool", "tool_name": name, "arguments": long_message})
        assert result.observation["error"]["error_type"] == "tool_not_found"
        assert result.metadata["reward_breakdown"]["tool_succeeded"] == 0.0
        assert in_range(result.reward, result.metadata) <= 0.5


def test_an_oversized_message_earns_the_full_length_reward_and_no_more(base_url: str) -> None:
    with EchoEnv(base_url=base_url).sync() as env:
        env.reset()
        for size in (32, 1_000, 4_000_000):
            action = CallToolAction(tool_name="echo_message", arguments={"message": "z" * size})
            result = env.step(action)
            assert in_range(result.reward, result.metadata) == HIGH
        assert env.call_tool("echo_with_length", message="z" * 1_000)["length"] == 1_000


@pytest.mark.parametrize(
    "action",
    [
        {"type": "call_tool", "tool_name": "echo_message", "reward": 1e9},
        {"type": "call_tool", "tool_name": "echo_message", "done": True},
        {"type": "call_tool", "tool_name": 5},
        {"type": "call_tool", "tool_name": "echo_message", "arguments": "message=hi"},
        {"type": "call_tool"},
        {"tool_name": "echo_message", "arguments": [1, 2]},
        {"type": "set_reward", "value": 1e9},
    ],
)
def test_actions_that_claim_a_reward_or_are_not_tool_calls_are_validation_errors(
    base_url: str, action: dict[str, Any]
) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset()
        with pytest.raises(ActionValidationError):
            env.step(action)
        assert env.state()["step_count"] == 0


def test_a_reward_claimed_in_the_action_metadata_changes_nothing(base_url: str) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset()
        claimed = {
            "type": "call_tool",
            "tool_name": "echo_message",
            "arguments": {"message": "hi"},
            "metadata": {"reward": 1e9, "reward_breakdown": {"tool_succeeded": 1e9}},
        }
        result = env.step(claimed)
        assert result.reward == pytest.approx(0.5 + 0.5 * 2 / 32)
        in_range(result.reward, result.metadata)


def test_a_long_episode_never_leaves_the_range_over_every_transport(base_url: str) -> None:
    """Echo episodes never end (``done`` stays False); step after step, and over HTTP, the
    reward stays where the rubric says."""
    with EchoEnv(base_url=base_url).sync() as env:
        env.reset()
        for i in range(200):
            message = "w" * (i % 50)
            result = env.step(CallToolAction(tool_name="echo_message", arguments={"message": message}))  # fmt: skip
            assert not result.done
            in_range(result.reward, result.metadata)
        with pytest.raises(ToolCallError, match="no_such_tool"):
            env.call_tool("no_such_tool")
    call = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "q" * 64}}
    reply = httpx.post(base_url + "/step", json={"action": call, "reward": 5}).json()
    assert in_range(reply["reward"], reply.get("metadata")) == HIGH
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "echo_message", "arguments": {"message": "hi", "reward": 9}}}  # fmt: skip
    error = httpx.post(base_url + "/mcp", json=rpc).json()["error"]
    assert error["code"] == -32602 and error["data"]["error_type"] == "invalid_args"
