"""Every exported client class works when constructed directly, with no subclass or .sync()."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

import openenv_hub
import openenv_hub.client
from openenv_hub import EnvClient, SyncEnvClient

CLIENTS = sorted(
    {
        name
        for module in (openenv_hub, openenv_hub.client)
        for name in module.__all__
        if isinstance(getattr(module, name), type)
        and issubclass(getattr(module, name), (EnvClient, SyncEnvClient))
    }
)


def test_the_exported_clients_are_the_ones_tested() -> None:
    assert CLIENTS == [
        "EnvClient",
        "GenericEnvClient",
        "MCPToolClient",
        "SyncEnvClient",
        "SyncMCPToolClient",
    ]


@pytest.mark.parametrize("name", CLIENTS)
def test_a_client_constructed_directly_drives_the_echo_environment(
    echo_server: Any, name: str
) -> None:
    cls = getattr(openenv_hub, name)
    call = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "Hi"}}

    async def drive_async() -> tuple[Any, Any]:
        async with cls(echo_server.url) as env:
            await env.reset()
            return await env.step(call), await env.state()

    def drive_sync() -> tuple[Any, Any]:
        with cls(echo_server.url) as env:
            env.reset()
            return env.step(call), env.state()

    is_async = inspect.iscoroutinefunction(cls.reset)
    result, state = asyncio.run(drive_async()) if is_async else drive_sync()
    observation = result.observation
    data = (
        observation["result"]["data"]
        if isinstance(observation, dict)
        else observation.result["data"]
    )
    assert data == "Hi"
    step_count = state["step_count"] if isinstance(state, dict) else state.step_count
    assert step_count == 1
