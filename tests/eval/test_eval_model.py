"""``openenv eval --model`` against a real OpenAI-compatible server: ``transformers serve`` with
a tiny random-weight model. Such a model rarely calls a tool: a reply without a tool call ends
the rollout, and the rollout is still written, scored and summarized."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from eval_support import expected_pass_at_k, read_rows


@pytest.mark.slow
def test_eval_of_a_served_model_writes_twelve_rollouts(
    cli: Any, word_game: Any, workdir: Path, model_server: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    base_url, model = model_server
    monkeypatch.setenv("EVAL_TEST_KEY", "sk-secret-value")
    result = cli(
        "eval", word_game.url, "--model", model, "--base-url", base_url,
        "--api-key-env", "EVAL_TEST_KEY", "--tasks", "tasks", "-k", 4, "-c", 4,
        "--max-turns", 2, "--max-tokens", 12, "--temperature", 0.7, "-o", "results",
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(workdir / "results")
    assert len(rows) == 12
    assert len({(r["task_key"], r["sample"]) for r in rows}) == 12
    assert {r["error"] for r in rows} == {None}
    for row in rows:  # the tokens and finish reason transformers serve reports, turn by turn
        assert len(row["usage"]) == row["turns"] >= 1
        for turn in row["usage"]:
            assert turn["prompt_tokens"] > 0 and 0 < turn["completion_tokens"] <= 12
            assert turn["finish_reason"] in ("stop", "length", "tool_calls")
        assert row["completion_tokens"] == sum(u["completion_tokens"] for u in row["usage"])
        assert row["finish_reason"] == row["usage"][-1]["finish_reason"]
        messages = json.loads(row["messages"])
        assert messages[1]["role"] == "assistant"
        if row["finish"] == "text":  # a plain reply ended the rollout
            assert "tool_calls" not in messages[-1]
    summary = json.loads((workdir / "results" / "summary.json").read_text())
    for k in range(1, 5):
        assert math.isclose(summary["pass_at_k"][str(k)], expected_pass_at_k(rows, k))
    assert (workdir / "results" / "plot.png").is_file()
    usage = summary["usage"]
    assert usage["completion_tokens"] == sum(r["completion_tokens"] for r in rows)
    assert sum(usage["finish_reasons"].values()) == sum(r["turns"] for r in rows)
    assert summary["last_run"]["completion_tokens_per_s"] > 0
    assert "completion tokens/s this run" in result.out
    recorded = (workdir / "results" / "run.json").read_text()
    assert json.loads(recorded)["sampling"] == {"temperature": 0.7, "top_p": 1.0, "max_tokens": 12}
    written = "".join(p.read_text() for p in (workdir / "results").glob("*.json*"))
    assert "sk-secret-value" not in written + result.text  # the key stays in the environment


@pytest.mark.slow
def test_a_served_model_on_a_localhub_taskset_pushed_and_rescored(
    cli: Any, word_game: Any, workdir: Path, model_server: tuple[str, str], hub_env: Any
) -> None:
    import datasets
    from eval_support import WORD_TASKS

    base_url, model = model_server
    tasks_repo, results_repo = hub_env.repo_id("word-tasks"), hub_env.repo_id("word-eval")
    api = hub_env.api()
    api.create_repo(tasks_repo, repo_type="dataset")
    lines = "".join(json.dumps(task) + "\n" for task in WORD_TASKS).encode()
    api.upload_file(
        path_or_fileobj=lines, path_in_repo="test.jsonl", repo_id=tasks_repo, repo_type="dataset"
    )
    result = cli(
        "eval", word_game.url, "--model", model, "--base-url", base_url,
        "--tasks", f"hf://datasets/{tasks_repo}", "-k", 4, "-c", 4, "--max-turns", 2,
        "--max-tokens", 12, "-o", "results", "--push-to-hub", results_repo,
    )  # fmt: skip
    assert result.code == 0, result.text
    rows = read_rows(workdir / "results")
    assert sorted({r["task_key"] for r in rows}) == ["brick", "crane", "pious"]
    assert len({(r["task_key"], r["sample"]) for r in rows}) == 12
    assert datasets.load_dataset(results_repo, split="test").to_list() == rows

    rescored = cli("rescore", "results")
    assert rescored.code == 0, rescored.text
    assert "12 unchanged, 0 changed, 0 not rescored" in rescored.out
