"""Our clients drive servers built on the `openenv` package."""

from __future__ import annotations

from typing import Any

import pytest
from echo_env import EchoEnv

from openenv_hub import (
    Action,
    CallToolAction,
    EnvClient,
    GenericEnvClient,
    ListToolsAction,
    MCPToolClient,
    Observation,
    State,
)
from openenv_hub.errors import ActionValidationError, ToolCallError

pytestmark = pytest.mark.peer


class Message(Action):
    message: str


class Echoed(Observation):
    echoed_message: str = ""
    message_length: int = 0


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


async def test_generic_client(peer_echo: Any) -> None:
    async with GenericEnvClient(peer_echo.url) as env:
        reset = await env.reset(episode_id="ours", seed=1)
        assert reset.metadata == {"status": "ready"} and reset.reward == 0.0
        listed = await env.step({"type": "list_tools"})
        assert [t["name"] for t in listed.observation["tools"]] == [
            "echo_message",
            "echo_with_length",
        ]
        called = await env.step(
            {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "Hi"}}
        )
        assert called.observation["result"]["data"] == "Hi"
        assert await env.state() == {"episode_id": "ours", "step_count": 2}
        with pytest.raises(ActionValidationError):
            await env.step({"nope": 1})


def test_generic_client_sync(peer_echo: Any) -> None:
    with GenericEnvClient(peer_echo.url).sync() as env:
        env.reset(episode_id="sync")
        env.step({"type": "list_tools"})
        assert env.state() == {"episode_id": "sync", "step_count": 1}


async def test_mcp_tool_client(peer_echo: Any) -> None:
    async with MCPToolClient(peer_echo.url) as env:
        await env.reset()
        assert [t.name for t in await env.list_tools()] == ["echo_message", "echo_with_length"]
        assert (await env.list_tools())[0].input_schema["required"] == ["message"]
        assert await env.call_tool("echo_message", message="Hi") == "Hi"
        assert await env.call_tool("echo_with_length", message="Test") == {
            "message": "Test",
            "length": 4,
        }
        with pytest.raises(ToolCallError) as failed:
            await env.call_tool("nope")
        assert failed.value.error_type == "tool_not_found"


def test_echo_env_client_sync(peer_echo: Any) -> None:
    with EchoEnv(base_url=peer_echo.url).sync() as env:
        env.reset()
        result = env.step(CallToolAction(tool_name="echo_message", arguments={"message": "typed"}))
        assert result.observation.result["data"] == "typed"  # type: ignore[attr-defined]
        assert [t.name for t in env.step(ListToolsAction()).observation.tools] == [  # type: ignore[attr-defined]
            "echo_message",
            "echo_with_length",
        ]
        assert env.call_tool("echo_with_length", message="ab") == {"message": "ab", "length": 2}


async def test_typed_client(peer_typed: Any) -> None:
    async with TypedEnv(base_url=peer_typed.url) as env:
        await env.reset(episode_id="typed")
        result = await env.step(Message(message="hello"))
        assert isinstance(result.observation, Echoed)
        assert (result.observation.echoed_message, result.observation.message_length) == (
            "hello",
            5,
        )
        assert result.reward == pytest.approx(0.5)
        assert result.metadata == {"original_message": "hello", "step": 1}
        state = await env.state()
        assert (state.episode_id, state.step_count) == ("typed", 1)
