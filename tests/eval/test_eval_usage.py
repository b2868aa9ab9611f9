"""What a run records and says beside the scores: the tokens and finish reasons the endpoint
reports, per turn, per rollout and in all; the sampling settings sent (and recorded); a warning
when every sample came back the same; progress lines outside a terminal; synchronous policies
run side by side."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from eval_support import read_rows
from restartable import child_server, fault_command

__all__ = ["child_server"]  # fixtures

RUN = ("--model", "scripted", "--tasks", "tasks", "-k", 2, "-c", 2, "--max-turns", 6)


def test_usage_is_recorded_per_turn_per_rollout_and_in_all(
    cli: Any, word_game: Any, workdir: Path, child_server: Any
) -> None:
    model = child_server(fault_command(), "/requests")
    result = cli(
        "eval", word_game.url, *RUN, "--base-url", f"{model.url}/v1", "-o", "out",
        "--sampling-args", '{"top_k": 5, "stop": ["</guess>"]}',
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(workdir / "out")
    for row in rows:
        assert len(row["usage"]) == row["turns"] >= 1
        assert {u["finish_reason"] for u in row["usage"]} == {"tool_calls"}
        assert row["completion_tokens"] == 7 * row["turns"]  # the server's 7 a turn
        assert row["prompt_tokens"] == sum(u["prompt_tokens"] for u in row["usage"]) > 0
        assert row["finish_reason"] == "tool_calls"
    summary = json.loads((workdir / "out" / "summary.json").read_text())
    turns = sum(r["turns"] for r in rows)
    assert summary["usage"]["completion_tokens"] == 7 * turns
    assert summary["usage"]["finish_reasons"] == {"tool_calls": turns}
    assert summary["last_run"]["completion_tokens_per_s"] > 0
    assert f"Tokens: {summary['usage']['prompt_tokens']} prompt, {7 * turns} completion" in (
        result.out
    )
    sent = httpx.get(f"{model.url}/requests", timeout=10).json()["last"]
    assert sent["top_k"] == 5 and sent["stop"] == ["</guess>"] and sent["max_tokens"] == 256
    assert isinstance(sent["seed"], int) and sent["model"] == "scripted"
    recorded = json.loads((workdir / "out" / "run.json").read_text())["sampling"]
    assert recorded == {
        "temperature": 1.0, "top_p": 1.0, "max_tokens": 256, "top_k": 5, "stop": ["</guess>"],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("{top_k: 5}", "--sampling-args is not JSON"),
        ("[1, 2]", "--sampling-args is list JSON, not an object"),
        ('{"seed": 3}', "--sampling-args may not set seed"),
    ],
)
def test_sampling_args_that_cannot_be_sent_are_refused(
    cli: Any, workdir: Path, given: str, said: str
) -> None:
    result = cli(
        "eval", "http://127.0.0.1:9", *RUN, "--base-url", "http://127.0.0.1:9/v1",
        "--sampling-args", given,
    )  # fmt: skip
    assert result.code == 1 and said in result.err and "Traceback" not in result.err


def test_identical_samples_are_warned_about(
    cli: Any, word_game: Any, workdir: Path, child_server: Any
) -> None:
    model = child_server(fault_command(), "/requests")
    base = ("eval", word_game.url, *RUN, "--base-url", f"{model.url}/v1")
    varied = cli(*base, "-o", "varied")
    assert varied.code == 0 and "came back identical" not in varied.err
    greedy = cli(*base, "-o", "greedy", "--sampling-args", '{"greedy": true}')
    assert greedy.code == 0, greedy.text
    assert "every sample of the first 3 tasks came back identical" in greedy.err
    assert "do_sample" in greedy.err


def test_progress_lines_outside_a_terminal(cli: Any, word_game: Any, workdir: Path) -> None:
    result = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-k", 10,
        "-o", "out",
    )  # fmt: skip
    assert result.code == 0, result.text
    lines = [line for line in result.out.splitlines() if line.startswith("eval: ")]
    assert [line.split(" rollouts")[0] for line in lines] == [
        f"eval: {n} of 30" for n in (3, 6, 9, 12, 15, 18, 21, 24, 27, 30)
    ]
    assert all("mean return" in line and "rollouts/s" in line for line in lines)


SLEEPY = """
import time


def answer(messages, tools, seed):
    time.sleep(0.3)
    return "done"


async def answer_async(messages, tools, seed):
    import asyncio

    await asyncio.sleep(0.3)
    return "done"
"""


@pytest.mark.parametrize("function", ["answer", "answer_async"])
def test_policies_run_side_by_side(cli: Any, word_game: Any, workdir: Path, function: str) -> None:
    """A policy that takes 0.3 s a turn, one turn a rollout, eight at once: at least 0.8 x
    8 / 0.3 rollouts per second, a synchronous one (in worker threads) as an async one."""
    (workdir / "sleepy.py").write_text(SLEEPY)
    try:
        result = cli(
            "eval", word_game.url, "--policy", f"sleepy:{function}", "--tasks", "tasks",
            "-k", 32, "-c", 8, "-o", function, "--pass-threshold", 0,
        )  # fmt: skip
    finally:
        sys.modules.pop("sleepy", None)
    assert result.code == 0, result.text
    summary = json.loads((workdir / function / "summary.json").read_text())
    assert summary["rollouts"] == 96
    assert summary["last_run"]["rollouts_per_s"] >= 0.8 * 8 / 0.3, summary["last_run"]


def test_the_taskset_columns_are_kept_in_the_rows(cli: Any, word_game: Any, workdir: Path) -> None:
    from openenv_hub.eval import load_tasks

    tasks = [
        {"key": "brick", "reset": {"seed": 0}, "difficulty": "easy", "category": "build", "n": 2},
        {"key": "pious", "reset": {"seed": 1}, "difficulty": "hard", "notes": ["a list"]},
    ]
    (workdir / "tasks" / "test.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    result = cli("eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-o", "o")
    assert result.code == 0, result.text
    rows = {r["task_key"]: r for r in read_rows(workdir / "o")}
    assert rows["brick"]["task_difficulty"] == "easy" and rows["brick"]["task_category"] == "build"
    assert rows["brick"]["task_n"] == 2 and rows["pious"]["task_difficulty"] == "hard"
    assert "task_notes" not in rows["pious"]  # only plain values: numbers, booleans, short text
    digests = {t.key: t.digest for t in load_tasks(str(workdir / "tasks"))}
    assert {k: r["task_digest"] for k, r in rows.items()} == digests
