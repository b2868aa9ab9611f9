"""Results a leaderboard can trust: a run with rollouts that failed on infrastructure errors is
pushed only with --partial, and its card says so; ``openenv eval push DIR`` publishes a folder;
Ctrl-C with --partial --push-to-hub pushes what there is."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from child_processes import end_child, start_child
from eval_support import read_rows

FLAKY = """
import guesser


def guess(messages, tools, seed):
    if seed % 3 == 0:
        raise ConnectionError("the policy's backend is down")
    return guesser.guess(messages, tools, seed)
"""
ARGS = ("--tasks", "tasks", "-k", 4, "-c", 4, "-o", "results")


def card_figures(hub_env: Any, repo: str) -> dict[str, Any]:
    figures: dict[str, Any] = hub_env.api().dataset_info(repo).card_data.get("openenv_eval")
    return figures


def test_a_run_with_errors_is_pushed_only_as_partial(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    (workdir / "flaky.py").write_text(FLAKY)
    repo = hub_env.repo_id("word-eval")
    try:
        result = cli(
            "eval", word_game.url, "--policy", "flaky:guess", *ARGS, "--fail-on-error", 1,
            "--push-to-hub", repo,
        )  # fmt: skip
    finally:
        sys.modules.pop("flaky", None)
    errors = sum(1 for r in read_rows(workdir / "results") if r["finish"] == "error")
    assert 0 < errors < 12
    assert result.code == 1
    assert f"results holds {errors} rollouts that failed on infrastructure errors" in result.err
    assert "--partial" in result.err
    refused = cli("eval", "push", "results", "-r", repo)
    assert refused.code == 1 and "--partial" in refused.err

    pushed = cli("eval", "push", "results", "-r", repo, "--partial")
    assert pushed.code == 0, pushed.text
    figures = card_figures(hub_env, repo)
    assert figures["complete"] is False and figures["errors"] == errors
    assert figures["errors_by_kind"] == {"policy": errors}
    assert figures["rollouts"] == 12 - errors


def test_eval_push_publishes_a_folder_with_what_the_card_needs(
    cli: Any, word_game: Any, workdir: Path, hub_env: Any
) -> None:
    assert cli("eval", word_game.url, "--policy", "guesser:guess", *ARGS).code == 0
    repo = hub_env.repo_id("word-eval")
    pushed = cli("eval", "push", "results", "-r", repo)
    assert pushed.code == 0, pushed.text
    assert f"Pushed to {hub_env.endpoint}/datasets/{repo}" in pushed.out
    figures = card_figures(hub_env, repo)
    settings = json.loads((workdir / "results" / "run.json").read_text())
    assert figures["complete"] is True and figures["errors"] == 0
    assert figures["taskset_digest"] == settings["taskset_digest"]
    assert figures["toolkit_version"] == settings["toolkit_version"]
    assert figures["sampling"] == settings["sampling"] and figures["rollouts_per_task"] == 4


def test_ctrl_c_with_partial_pushes_what_there_is(
    word_game: Any, workdir: Path, hub_env: Any
) -> None:
    repo = hub_env.repo_id("word-eval")
    command = [
        sys.executable, "-m", "openenv_hub_cli.main", "eval", word_game.url,
        "--policy", "guesser:guess", *map(str, ARGS), "--push-to-hub", repo, "--partial",
    ]  # fmt: skip
    slow = {**os.environ, "GUESS_PAUSE_S": "0.3"}
    child = start_child(command, cwd=workdir, env=slow, stdout=-1, stderr=-1)
    rollouts = workdir / "results" / "rollouts.jsonl"
    try:
        deadline = time.monotonic() + 60
        while not (rollouts.is_file() and rollouts.read_text().count("\n") >= 2):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        end_child(child)
    assert child.returncode == 130, err
    kept = read_rows(workdir / "results")
    assert 2 <= len(kept) < 12
    assert f"Pushed to {hub_env.endpoint}/datasets/{repo}" in out.decode()
    figures = card_figures(hub_env, repo)
    assert figures["complete"] is False and figures["rollouts"] == len(kept)


def test_a_card_with_tasks_left_short_is_not_complete() -> None:
    """Every rollout asked was played and none failed, yet a task has fewer samples than the
    others (a resume under a lower --limit): the card does not call the run complete."""
    import yaml

    from openenv_hub.eval.publish import dataset_card

    settings = {"expected_rollouts": 4, "model": "m", "environment": {"name": "e"}}
    summary = {
        "rollouts": 4, "tasks": 3, "errors": 0, "return": {"mean": 0.5, "std": 0.5},
        "pass_at_k": {"1": 0.5}, "incomplete_tasks": ["test/crane"],
    }  # fmt: skip
    front = yaml.safe_load(dataset_card(settings, summary, ["test"]).split("---")[1])
    assert front["openenv_eval"]["complete"] is False
    whole = yaml.safe_load(
        dataset_card(settings, {**summary, "incomplete_tasks": []}, ["test"]).split("---")[1]
    )
    assert whole["openenv_eval"]["complete"] is True
