"""A run killed with SIGKILL keeps the rollouts it finished; ``--resume`` plays exactly the
missing (task, sample) pairs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from eval_support import read_rows


def test_a_killed_run_resumes_with_exactly_the_missing_rollouts(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    command = [
        sys.executable, "-m", "openenv_hub_cli.main", "eval", word_game.url,
        "--policy", "guesser:guess", "--tasks", "tasks", "-k", "4", "-c", "2", "-o", "run",
    ]  # fmt: skip
    slow = {**os.environ, "GUESS_PAUSE_S": "0.3"}  # each turn of the killed run takes 0.3 s
    child = subprocess.Popen(command, cwd=workdir, env=slow, start_new_session=True)
    rollouts = workdir / "run" / "rollouts.jsonl"
    try:
        deadline = time.monotonic() + 60
        while not (rollouts.is_file() and len(rollouts.read_text().splitlines()) >= 3):
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no rollouts were written in 60 s"
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    before = read_rows(workdir / "run")
    assert 3 <= len(before) < 12

    result = cli(
        "eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-k", 4,
        "-c", 2, "-o", "run", "--resume",
    )  # fmt: skip
    assert result.code == 0, result.text
    assert f"Played {12 - len(before)} rollouts; 12 of 12" in result.out
    rows = read_rows(workdir / "run")
    assert len(rows) == 12
    assert len({(r["task_key"], r["sample"]) for r in rows}) == 12
    assert rows[: len(before)] == before


def test_resume_refuses_other_settings(cli: Any, word_game: Any, workdir: Path) -> None:
    base = ("eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-o", "r")
    assert cli(*base, "-k", 1).code == 0
    other = cli(*base, "-k", 2, "--resume")
    assert other.code != 0
    assert "other settings (rollouts_per_task)" in other.text


@pytest.mark.slow
def test_a_killed_run_of_a_served_model_resumes(
    cli: Any, word_game: Any, workdir: Path, model_server: tuple[str, str]
) -> None:
    base_url, model = model_server
    args = [
        "eval", word_game.url, "--model", model, "--base-url", base_url, "--tasks", "tasks",
        "-k", "4", "-c", "2", "--max-turns", "2", "--max-tokens", "24", "-o", "run",
    ]  # fmt: skip
    command = [sys.executable, "-m", "openenv_hub_cli.main", *args]
    child = subprocess.Popen(command, cwd=workdir, start_new_session=True)
    rollouts = workdir / "run" / "rollouts.jsonl"
    try:
        deadline = time.monotonic() + 120
        while not (rollouts.is_file() and len(rollouts.read_text().splitlines()) >= 2):
            assert child.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no rollouts were written in 120 s"
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    before = read_rows(workdir / "run")
    assert 2 <= len(before) < 12

    result = cli(*args, "--resume")
    assert result.code == 0, result.text
    rows = read_rows(workdir / "run")
    assert len(rows) == 12 and len({(r["task_key"], r["sample"]) for r in rows}) == 12
    assert rows[: len(before)] == before


def test_ctrl_c_keeps_the_finished_rollouts_and_says_how_to_resume(
    word_game: Any, workdir: Path
) -> None:
    command = [
        sys.executable, "-m", "openenv_hub_cli.main", "eval", word_game.url,
        "--policy", "guesser:guess", "--tasks", "tasks", "-k", "4", "-c", "2", "-o", "run",
    ]  # fmt: skip
    slow = {**os.environ, "GUESS_PAUSE_S": "0.3"}
    child = subprocess.Popen(
        command, cwd=workdir, env=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,  # and SIGINT handled as a terminal's Ctrl-C would be
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    rollouts = workdir / "run" / "rollouts.jsonl"
    try:
        deadline = time.monotonic() + 60
        while not (rollouts.is_file() and len(rollouts.read_text().splitlines()) >= 2):
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
    kept = read_rows(workdir / "run")
    assert child.returncode == 130
    assert 2 <= len(kept) < 12
    assert f"Stopped: {len(kept)} of 12 rollouts are in run" in err.decode()
