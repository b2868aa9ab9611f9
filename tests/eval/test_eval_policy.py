"""``openenv eval --policy``: 3 tasks x 4 rollouts at concurrency 4 through an EnvPool, one row
per rollout, a summary whose pass@k matches the saved rows, a plot."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from eval_support import expected_pass_at_k, read_rows


def test_eval_plays_every_pair_and_summarizes_them(cli: Any, word_game: Any, workdir: Path) -> None:
    result = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks",
        "--rollouts-per-task", 4, "--concurrency", 4, "--max-turns", 6, "-o", "results",
    )  # fmt: skip
    assert result.code == 0, result.text
    assert "Played 12 rollouts; 12 of 12 in results" in result.out

    rows = read_rows(workdir / "results")
    assert sorted((r["task_key"], r["sample"]) for r in rows) == sorted(
        (key, s) for key in ("brick", "pious", "crane") for s in range(4)
    )
    assert len({r["seed"] for r in rows}) == 12
    for row in rows:
        steps = json.loads(row["steps"])
        messages = json.loads(row["messages"])
        assert row["tool_calls"] == len(steps) == len(row["rewards"]) >= 1
        assert row["return"] == sum(s["reward"] for s in steps)
        assert row["passed"] == (steps[-1]["observation"]["feedback"] == "GGGGG")
        assert row["finish"] == "done" and row["error"] is None
        assert messages[0]["content"].startswith("Find the secret word.\n\n")
        assert messages[-1]["role"] == "tool"
        assert steps[0]["breakdown"]  # the rubric's breakdown of each step

    summary = json.loads((workdir / "results" / "summary.json").read_text())
    assert summary["rollouts"] == 12 and summary["tasks"] == 3
    assert 0 < summary["pass_at_k"]["1"] < summary["pass_at_k"]["4"] <= 1
    for k in range(1, 5):
        assert math.isclose(summary["pass_at_k"][str(k)], expected_pass_at_k(rows, k))
    returns = [r["return"] for r in rows]
    assert math.isclose(summary["return"]["mean"], sum(returns) / 12)
    assert (workdir / "results" / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    settings = json.loads((workdir / "results" / "run.json").read_text())
    assert settings["rollouts_per_task"] == 4 and settings["policy"] == "guesser:guess"


def test_a_second_run_into_the_same_folder_needs_resume(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    args = ("eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-o", "out")
    assert cli(*args).code == 0
    again = cli(*args)
    assert again.code != 0
    assert "already holds rollouts" in again.text and "--resume" in again.text
    resumed = cli(*args, "--resume")
    assert resumed.code == 0 and "Played 0 rollouts; 3 of 3" in resumed.out
    assert len(read_rows(workdir / "out")) == 3


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    from openenv_hub.eval import pass_at_k

    assert pass_at_k(4, 0, 1) == 0.0
    assert pass_at_k(4, 1, 1) == 0.25
    assert pass_at_k(4, 1, 2) == 0.5
    assert pass_at_k(4, 3, 2) == 1.0
    assert math.isclose(pass_at_k(10, 3, 4), 1 - math.comb(7, 4) / math.comb(10, 4))


def test_a_failing_policy_is_an_error_not_a_result(cli: Any, word_game: Any, workdir: Path) -> None:
    (workdir / "broken.py").write_text(
        "def guess(messages, tools, seed):\n    raise RuntimeError('policy broke')\n"
    )
    result = cli("eval", word_game.url, "--policy", "broken:guess", "--tasks", "tasks", "-k", 2)
    assert result.code == 1, result.text  # after every row and the summary were written
    assert "errors 6" in result.out  # in the progress lines and in the closing one
    assert "rollouts/s" in result.out
    assert "6 of 6 rollouts ended in an error, not a result (policy 6)" in result.err
    rows = read_rows(workdir / "eval-results")
    assert {(r["finish"], r["error_kind"], r["passed"], r["return"]) for r in rows} == {
        ("error", "policy", None, None)
    }
    assert all(
        r["error"] == f"policy: RuntimeError: policy broke (task test/{r['task_key']}, "
        f"sample {r['sample']}, turn 1)"
        for r in rows
    )
    summary = json.loads((workdir / "eval-results" / "summary.json").read_text())
    assert summary["errors"] == 6 and summary["rollouts"] == 0
    assert summary["pass_at_k"] == {}  # no pass@k computed over errors
    assert summary["incomplete_tasks"] == ["test/brick", "test/crane", "test/pious"]
