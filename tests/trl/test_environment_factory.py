"""openenv_hub.trl.environment_factory: the class TRL's GRPOTrainer plays, built from a served
environment (no trainer here: tests/examples/test_grpo.py runs one)."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.trl import ToolEnvironment, environment_factory, tool_schemas

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from word_game import app as word_game_app


def tools_of(instance: Any) -> list[str]:
    """The methods TRL exposes as tools: public ones, less reset and get_reward."""
    return [
        name
        for name, _ in inspect.getmembers(instance, predicate=inspect.ismethod)
        if not name.startswith("_") and name not in ("reset", "get_reward")
    ]


def test_an_mcp_environment_gets_one_method_per_tool(echo_server: Any) -> None:
    EchoEnv = environment_factory(echo_server.url)
    assert EchoEnv.__name__ == "EchoEnv" and issubclass(EchoEnv, ToolEnvironment)
    schemas = tool_schemas(EchoEnv)
    assert [s["function"]["name"] for s in schemas] == ["echo_message", "echo_with_length"]
    assert schemas[0]["function"]["parameters"] == {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message to echo back"}},
        "required": ["message"],
    }
    env = EchoEnv()
    try:
        assert tools_of(env) == ["echo_message", "echo_with_length"]
        assert env.reset(prompt="ignored column") is None  # echo's reset shows nothing
        assert env.echo_message("hello") == "hello"
        assert json.loads(env.echo_with_length(message="hey")) == {"message": "hey", "length": 3}
        assert env.rewards == [0.5 + 0.5 * 5 / 32, 0.5 + 0.5 * 3 / 32]
        assert env.get_reward() == pytest.approx(1 + 0.5 * 8 / 32)
        assert env.breakdowns[0] == {"tool_succeeded": 1.0, "message_length": 5 / 32}
        env.reset()
        assert env.get_reward() == 0.0
    finally:
        env._close()


def test_a_typed_environment_gets_a_method_named_after_its_action(serve: Any) -> None:
    server = serve(word_game_app)
    WordGame = environment_factory(server.url)
    (schema,) = tool_schemas(WordGame)
    assert schema["function"]["name"] == "guess"
    assert schema["function"]["description"] == "Guess the secret word."
    assert schema["function"]["parameters"]["properties"]["word"]["type"] == "string"
    env = WordGame()
    try:
        intro = env.reset(seed=2, prompt="a dataset column the game does not take")
        assert intro is not None and intro.startswith("\n\n{")  # TRL appends it to the prompt
        assert json.loads(env.guess("slate"))["feedback"] == "XXGXG"
        assert json.loads(env.guess(word="crane"))["message"] == "You found it!"
        assert env.done and env.get_reward() == pytest.approx(0.1 + 1.1)
        with pytest.raises(ValueError, match="The episode is over"):
            env.guess("again")
    finally:
        env._close()


def test_tool_failures_become_value_errors_for_the_model(echo_server: Any) -> None:
    env = environment_factory(echo_server.url, tools=["echo_message"])()
    try:
        env.reset()
        assert tools_of(env) == ["echo_message"]
        with pytest.raises(ValueError, match="message"):
            env._step({"type": "call_tool", "tool_name": "echo_message", "arguments": {}})
    finally:
        env._close()


def test_mistakes_are_explained(echo_server: Any) -> None:
    with pytest.raises(ConfigurationError, match="No tools named \\['nope'\\]"):
        environment_factory(echo_server.url, tools=["nope"])
    with pytest.raises(ConfigurationError, match="Is the environment server running"):
        environment_factory("http://127.0.0.1:9", timeout_s=2)
