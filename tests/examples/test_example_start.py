"""The training examples say what they are doing from their first second, also when their
output goes to a file or a pipe (no terminal): loading TRL and torch takes several seconds, and
making the tiny model a few more, before the trainer prints anything."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from child_processes import end_child, start_child
from doc_blocks import REPO
from polling import wait_until
from serving import ServerThread, free_port


def _first_lines(script: str, env_url: str, count: int, output: Path) -> list[str]:
    """The first ``count`` lines the example prints to a pipe (fewer if it ends before)."""
    command = [sys.executable, str(REPO / "examples" / script), "--tiny", "--max-steps", "1"]
    process = start_child(
        [*command, "--env-url", env_url, "--output-dir", str(output)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
    reader.start()
    try:
        wait_until(lambda: len(lines) >= count or process.poll() is not None, 120, "its lines")
    finally:
        end_child(process)
    return lines[:count]


def test_the_echo_example_says_what_it_loads_and_makes(
    echo_server: ServerThread, tmp_path: Path
) -> None:
    assert _first_lines("grpo_echo.py", echo_server.url, 2, tmp_path / "out") == [
        "grpo_echo.py: loading TRL and torch (several seconds)\n",
        "grpo_echo.py: making the tiny model (a few seconds of fine-tuning)\n",
    ]


def test_the_word_game_example_says_what_it_loads(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing serves it: the example stops there
    lines = _first_lines("grpo_word_game.py", url, 1, tmp_path / "out")
    assert lines == ["grpo_word_game.py: loading TRL and torch (several seconds)\n"]
