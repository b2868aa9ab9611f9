"""A results folder has one writer at a time, and a resume plays the run it resumes: the same
tasks by content (a changed task is refused by name), more of them with a larger --limit, the
same server under another URL; the share of errors a run accepts is the user's to set."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from child_processes import end_child, start_child
from eval_support import read_rows

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import ResultsFolder

ARGS = ("--policy", "guesser:guess", "--tasks", "tasks", "-k", 4, "-c", 2, "-o", "run")


def test_a_second_writer_is_refused_with_who_holds_the_folder(tmp_path: Path) -> None:
    first = ResultsFolder(tmp_path / "r")
    first.start({"model": "m"}, resume=False)
    with pytest.raises(
        ConfigurationError, match=r"is being written by another run \(openenv eval, pid"
    ):
        ResultsFolder(tmp_path / "r").start({"model": "m"}, resume=True)
    first.unlock()
    second = ResultsFolder(tmp_path / "r")
    second.start({"model": "m"}, resume=True)  # the lock is free once the first let it go
    second.unlock()


def test_two_concurrent_resumes_cannot_both_write(cli: Any, word_game: Any, workdir: Path) -> None:
    args = [str(a) for a in ("eval", word_game.url, *ARGS)]
    command = [sys.executable, "-m", "openenv_hub_cli.main", *args, "--resume"]
    slow = {**os.environ, "GUESS_PAUSE_S": "0.2"}
    child = start_child(command, cwd=workdir, env=slow)
    rollouts = workdir / "run" / "rollouts.jsonl"
    try:
        deadline = time.monotonic() + 60
        while not (rollouts.is_file() and rollouts.read_text().count("\n") >= 1):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        second = cli("eval", word_game.url, *ARGS, "--resume")
        assert second.code == 1
        assert f"run is being written by another run (openenv eval, pid {child.pid})" in second.err
        assert child.wait(timeout=120) == 0
    finally:
        end_child(child)
    rows = read_rows(workdir / "run")
    assert len(rows) == 12 and len({(r["task_key"], r["sample"]) for r in rows}) == 12
    after = cli("eval", word_game.url, *ARGS, "--resume")  # the lock ended with its process
    assert after.code == 0 and "Played 0 rollouts; 12 of 12" in after.out


def test_a_task_whose_content_changed_is_refused_by_name(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    assert cli("eval", word_game.url, *ARGS).code == 0
    tasks = workdir / "tasks" / "test.jsonl"
    tasks.write_text(tasks.read_text().replace('"seed": 1', '"seed": 7'))
    result = cli("eval", word_game.url, *ARGS, "--resume")
    assert result.code == 1
    assert "The task test/pious changed since run was written" in result.err
    assert "another folder" in result.err


def test_resume_takes_a_larger_limit_and_another_name_of_the_same_server(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    first = cli("eval", word_game.url, *ARGS, "--limit", 2)
    assert first.code == 0 and "8 of 8 in run" in first.out
    localhost = word_game.url.replace("127.0.0.1", "localhost")
    more = cli("eval", localhost, *ARGS, "--limit", 3, "--resume")
    assert more.code == 0, more.text
    assert "Played 4 rollouts; 12 of 12 in run" in more.out
    assert {r["task_key"] for r in read_rows(workdir / "run")} == {"brick", "pious", "crane"}
    settings = json.loads((workdir / "run" / "run.json").read_text())
    assert settings["env"] == localhost and settings["expected_rollouts"] == 12


def test_another_environment_under_the_same_folder_is_refused(
    cli: Any, word_game: Any, task_game: Any, workdir: Path
) -> None:
    assert cli("eval", word_game.url, *ARGS, "--limit", 1).code == 0
    other = cli("eval", task_game.url, *ARGS, "--limit", 1, "--resume")
    assert other.code == 1 and "other settings (environment: word_game" in other.err


FLAKY = """
import guesser


def guess(messages, tools, seed):
    if "pious" in messages[0]["content"]:
        raise ConnectionError("the policy's backend is down")
    return guesser.guess(messages, tools, seed)
"""


def test_fail_on_error_sets_the_share_of_errors_a_run_accepts(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    (workdir / "tasks" / "test.jsonl").write_text(
        "".join(
            json.dumps({"key": key, "reset": {"seed": n}, "prompt": f"Find {key}."}) + "\n"
            for n, key in enumerate(["brick", "pious", "crane"])
        )
    )
    (workdir / "flaky.py").write_text(FLAKY)
    args = ("eval", word_game.url, "--policy", "flaky:guess", "--tasks", "tasks", "-k", 2)
    try:
        accepted = cli(*args, "-o", "half", "--fail-on-error", 0.5)
        refused = cli(*args, "-o", "fifth", "--fail-on-error", 0.2)
    finally:
        sys.modules.pop("flaky", None)
    assert accepted.code == 0, accepted.text  # 2 of 6 failed: a third, under a half
    assert refused.code == 1 and "2 of 6 rollouts ended in an error" in refused.err
    summary = json.loads((workdir / "half" / "summary.json").read_text())
    assert summary["errors"] == 2 and summary["incomplete_tasks"] == ["test/pious"]
    assert summary["tasks"] == 3 and summary["rollouts"] == 4
    assert summary["per_task"]["test/pious"] == {"rollouts": 0, "passed": 0, "mean_return": None}
