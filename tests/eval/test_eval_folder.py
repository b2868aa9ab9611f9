"""``openenv eval FOLDER``: the environment is served from its folder for the run (and stopped
after); an MCP environment's tools are the model's tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from eval_support import read_rows

REPO = Path(__file__).resolve().parents[2]

ECHO_POLICY = '''
def echo(messages, tools, seed):
    """Call the echo tool once, then answer in plain text (which ends the rollout)."""
    assert "echo_message" in [t["function"]["name"] for t in tools]
    if messages[-1]["role"] == "tool":
        return "done"
    return {"tool_calls": [{"name": "echo_message", "arguments": {"message": "hello"}}]}
'''


@pytest.fixture
def echo_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "test.jsonl").write_text('{"key": "hello", "reset": {}}\n')
    (tmp_path / "echoer.py").write_text(ECHO_POLICY)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("echoer", None)


def test_eval_of_an_environment_folder_with_mcp_tools(cli: Any, echo_work: Path) -> None:
    result = cli(
        "eval", REPO / "envs" / "echo_env", "--policy", "echoer:echo", "--tasks", "tasks",
        "-k", 2, "--pass-threshold", 0.5, "-o", "out",
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(echo_work / "out")
    assert len(rows) == 2
    for row in rows:
        messages = json.loads(row["messages"])
        steps = json.loads(row["steps"])
        assert row["finish"] == "text" and row["turns"] == 2 and row["error"] is None
        assert steps[0]["action"] == {
            "type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hello"},
        }  # fmt: skip
        assert messages[2] == {
            "role": "tool", "tool_call_id": "call_0", "name": "echo_message", "content": "hello",
        }  # fmt: skip
        assert row["return"] > 0.5 and row["passed"]
    settings = json.loads((echo_work / "out" / "run.json").read_text())
    assert settings["env"] == str(REPO / "envs" / "echo_env")


def test_an_env_that_is_neither_url_nor_folder_is_refused(cli: Any, echo_work: Path) -> None:
    result = cli("eval", "no-such-folder", "--policy", "echoer:echo", "--tasks", "tasks")
    assert result.code != 0
    assert "neither a server URL nor an environment folder" in result.text


def test_model_and_policy_are_exclusive(cli: Any, echo_work: Path) -> None:
    result = cli("eval", "http://127.0.0.1:9", "--policy", "echoer:echo", "--model", "m")
    assert result.code != 0 and "Choose one of --model" in result.text
    result = cli("eval", "http://127.0.0.1:9", "--model", "m")
    assert result.code != 0 and "--model needs --base-url" in result.text


TWICE_POLICY = '''
def twice(messages, tools, seed):
    """Call the echo tool in two turns, two calls in the second, then answer in text."""
    turns = sum(m["role"] == "assistant" for m in messages)
    if turns == 2:
        return "done"
    call = {"name": "echo_message", "arguments": {"message": "hello"}}
    return {"tool_calls": [call] * (turns + 1)}
'''


def test_tool_calls_of_a_rollout_have_unique_ids(cli: Any, echo_work: Path) -> None:
    """A policy that gives its tool calls no ids gets one per call, unique in the rollout, and
    each tool result answers its own call."""
    (echo_work / "twice.py").write_text(TWICE_POLICY)
    result = cli(
        "eval", REPO / "envs" / "echo_env", "--policy", "twice:twice", "--tasks", "tasks",
        "-k", 1, "-o", "out",
    )  # fmt: skip
    sys.modules.pop("twice", None)
    assert result.code == 0, result.text
    [row] = read_rows(echo_work / "out")
    messages = json.loads(row["messages"])
    calls = [call["id"] for m in messages for call in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert len(calls) == 3 and len(set(calls)) == 3, calls
    assert answered == calls
