"""Reward breakdowns travel with each observation and in ``state``, over the WebSocket.
(tests/compat/test_peer_rewards.py shows the `openenv` package's client reading them too.)"""

from __future__ import annotations

from typing import Any

import pytest
from echo_env import CallToolAction, EchoEnv, ListToolsAction

from openenv_hub import GenericEnvClient

FULL = 32  # echo_env.server.environment.FULL_LENGTH


async def test_the_echo_rubric_through_the_typed_client(echo_server: Any) -> None:
    async with EchoEnv(base_url=echo_server.url) as env:
        reset = await env.reset()
        assert reset.reward == 0.0 and "reward_breakdown" not in reset.observation.metadata
        listed = await env.step(ListToolsAction())
        called = await env.step(
            CallToolAction(tool_name="echo_message", arguments={"message": "Hi"})
        )
        state = await env.state()
    assert listed.reward == 0.0
    assert listed.metadata == {"reward_breakdown": {"tool_succeeded": 0.0, "message_length": 0.0}}
    assert called.reward == pytest.approx(0.5 + 0.5 * 2 / FULL)
    breakdown = {"tool_succeeded": 1.0, "message_length": 2 / FULL}
    assert called.metadata == called.observation.metadata == {"reward_breakdown": breakdown}
    assert state.model_extra == {
        "rewards": {
            "episode_return": pytest.approx(0.5 + 0.5 * 2 / FULL),
            "step_rewards": [0.0, pytest.approx(0.5 + 0.5 * 2 / FULL)],
            "last_breakdown": breakdown,
        }
    }


def test_the_echo_rubric_through_the_sync_generic_client(echo_server: Any) -> None:
    with GenericEnvClient(echo_server.url).sync() as env:
        env.reset()
        action = {
            "type": "call_tool",
            "tool_name": "echo_message",
            "arguments": {"message": "x" * 40},
        }
        result = env.step(action)
        assert result.reward == 1.0
        assert result.observation["metadata"]["reward_breakdown"]["message_length"] == 1.0
        assert env.state()["rewards"]["episode_return"] == 1.0
