"""A reward that cannot be believed (not a finite number, or outside the range the environment
declares) is the environment's defect: an error row of kind ``bad_reward``, counted in neither
the mean nor pass@k, and the run exits non-zero naming it; never a score of the model."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from eval_support import read_rows
from pydantic import Field

from openenv_hub import Action, Environment, Observation, State, create_app

SAY_POLICY = """
def say(messages, tools, seed):
    return {"tool_calls": [{"name": "say", "arguments": {"word": "hello"}}]}
"""


class Say(Action):
    word: str = Field(description="a word")


class Heard(Observation):
    message: str = ""


def environment_rewarding(reward: float) -> type[Environment[Say, Heard, State]]:
    class Rewarding(Environment[Say, Heard, State]):
        SUPPORTS_CONCURRENT_SESSIONS = True
        reward_range = (0.0, 1.0)

        def __init__(self) -> None:
            self._state = State()

        def reset(self, seed: Any = None, episode_id: Any = None, **kwargs: Any) -> Heard:
            self._state = State(episode_id=episode_id)
            return Heard(message="say a word")

        def step(self, action: Say, timeout_s: Any = None, **kwargs: Any) -> Heard:
            return Heard(message="heard", reward=reward, done=True)

        @property
        def state(self) -> State:
            return self._state

    return Rewarding


@pytest.mark.parametrize("reward", [5.0, math.nan, math.inf], ids=["above-range", "nan", "inf"])
def test_an_unbelievable_reward_is_an_error_row_not_a_score(
    cli: Callable[..., Any],
    serve: Callable[..., Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    reward: float,
) -> None:
    app = create_app(environment_rewarding(reward), Say, Heard, env_name="rewarding")
    server = serve(app)
    (tmp_path / "tasks").mkdir()
    task = {"key": "one", "reset": {}, "prompt": "Say something."}
    (tmp_path / "tasks" / "test.jsonl").write_text(json.dumps(task) + "\n")
    (tmp_path / "sayer.py").write_text(SAY_POLICY)
    monkeypatch.chdir(tmp_path)

    result = cli(
        "eval", server.url, "--policy", "sayer:say", "--tasks", "tasks",
        "--rollouts-per-task", 2, "-o", "out",
    )  # fmt: skip

    assert result.code == 1, result.text
    assert "bad_reward" in result.text
    rows = read_rows(tmp_path / "out")
    assert len(rows) == 2
    for row in rows:
        assert row["finish"] == "error" and row["error_kind"] == "bad_reward"
        assert row["return"] is None and row["passed"] is None
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["errors"] == 2 and summary["complete"] is False
    assert summary["errors_by_kind"] == {"bad_reward": 2}
