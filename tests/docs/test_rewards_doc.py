"""docs/rewards.md: its examples run as printed, and its reply sample is what the server sends."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from websockets.sync.client import connect

from openenv_hub import create_app
from openenv_hub.rubrics import Gate, LLMJudge, Step, Trajectory
from openenv_hub.testing.judge import judge_app

DOC = "docs/rewards.md"


def run_block(name: str, replacements: dict[str, str] | None = None) -> dict[str, Any]:
    """Execute a Python block of the document as a module; returns its namespace."""
    code = doc_block(DOC, name).code
    for old, new in (replacements or {}).items():
        assert old in code, old
        code = code.replace(old, new)
    module = types.ModuleType(f"rewards_doc_{name.replace('-', '_')}")
    sys.modules[module.__name__] = module  # pydantic resolves the models' annotations here
    exec(compile(code, DOC, "exec"), module.__dict__)
    return module.__dict__


def test_the_corridor_and_its_final_reply(serve: Any) -> None:
    corridor = run_block("rewards-attach")
    app = create_app(corridor["Corridor"], corridor["Move"], corridor["Maze"])
    server = serve(app)
    with connect(server.url.replace("http", "ws") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        ws.recv(timeout=10)
        replies = []
        for _ in range(3):
            ws.send(json.dumps({"type": "step", "data": {"direction": "right"}}))
            replies.append(json.loads(ws.recv(timeout=10))["data"])
        ws.send(json.dumps({"type": "state"}))
        state = json.loads(ws.recv(timeout=10))["data"]
    assert [r["reward"] for r in replies] == pytest.approx([0.1, 0.1, 1.1])
    sample = json.loads(doc_block(DOC, "rewards-final-reply").code)
    final = replies[-1]
    for metadata in (final["observation"]["metadata"], final["metadata"]):  # floats, rounded
        assert metadata["step_rewards"] == pytest.approx([0.35, 0.6, 1.1])
        metadata["step_rewards"] = sample["metadata"]["step_rewards"]
    reward, expected = final.pop("reward"), sample.pop("reward")
    assert reward == pytest.approx(expected)
    assert final == sample
    assert state["rewards"]["step_rewards"] == pytest.approx([0.35, 0.6, 1.1])


async def test_the_judge_rubric(serve: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    judge = serve(judge_app(lambda prompt: "7", api_key="k-123"))
    monkeypatch.setenv("JUDGE_API_KEY", "k-123")
    names = run_block("rewards-judge", {"127.0.0.1:8001": f"127.0.0.1:{judge.port}"})
    rubric: Gate = names["reply_rubric"]
    assert isinstance(names["polite"], LLMJudge)

    class Reply:
        def __init__(self, text: str) -> None:
            self.text = text

    def scored(text: str) -> Any:
        step = Step(action=Reply(text), observation=__import__("openenv_hub").Observation())
        return rubric.evaluate(Trajectory([step]))

    assert (await scored("Thank you kindly")).reward == pytest.approx(0.7)
    assert (await scored("   ")).reward == 0.0
    assert len(judge.app.state.prompts) == 1


def test_record_push_and_load(
    cli: Any, echo_server: Any, local_hub: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = doc_block(DOC, "rewards-policy").code
    assert policy.startswith("# my_policy.py\n")
    (tmp_path / "my_policy.py").write_text(policy)
    monkeypatch.chdir(tmp_path)
    command = doc_block(DOC, "rewards-record").lines[0].split()
    assert command[:3] == ["openenv", "record", "http://127.0.0.1:8000"]
    result = cli(*command[1:2], echo_server.url, *command[3:])
    sys.modules.pop("my_policy", None)
    assert result.code == 0, result.text
    assert "Recorded 3 episodes (15 steps) of echo_env" in result.out
    assert result.out.splitlines()[0].split() == ["episode", "steps", "return", "ended"]
    assert "Plot of the returns: echo.png" in result.out and (tmp_path / "echo.png").is_file()

    names = run_block("rewards-load")
    assert names["calls"] == ["hello"] * 15  # every call echoed "hello": 0.5 + 0.5 * 5/32


def test_in_process_rewards_equal_the_servers(capsys: pytest.CaptureFixture[str]) -> None:
    """The in-process block prints what the server sends for the same moves (the test above)."""
    names = run_block("rewards-attach")
    exec(compile(doc_block(DOC, "rewards-in-process").code, DOC, "exec"), names)
    assert capsys.readouterr().out == doc_block(DOC, "rewards-in-process-output").code
