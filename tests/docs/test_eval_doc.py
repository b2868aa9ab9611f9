"""docs/eval.md: its taskset, policy and commands run as printed (the servers' ports, and the
model folder, are the test's own)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import doc_block
from eval_support import SERVE_COMMAND, model_server, read_rows, word_game

DOC = "docs/eval.md"
__all__ = ["model_server", "word_game"]  # fixtures


def run_command(cli: Any, name: str, replacements: dict[str, str]) -> Any:
    """Run the ``openenv`` command of a block, with ``replacements`` made."""
    code = doc_block(DOC, name).code.strip()
    for old, new in replacements.items():
        assert old in code, old
        code = code.replace(old, new)
    words = shlex.split(code)
    assert words[0] == "openenv"
    result = cli(*words[1:])
    assert result.code == 0, result.text
    return result


@pytest.fixture
def documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the document's ``tasks/test.jsonl`` and ``guesser.py``; the cwd."""
    import sys

    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "test.jsonl").write_text(doc_block(DOC, "eval-tasks").code)
    (tmp_path / "guesser.py").write_text(doc_block(DOC, "eval-policy").code)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("guesser", None)


def test_the_game_is_served_as_printed() -> None:
    from word_game import main

    words = shlex.split(doc_block(DOC, "eval-serve").code)
    assert words[:2] == ["python", "examples/word_game.py"]
    assert (Path(__file__).parents[2] / words[1]).is_file()
    assert main.__module__ == "word_game" and words[2:] == ["--port", "8011"]


def test_tasks_play_resume_and_rescore_as_printed(
    cli: Any, word_game: Any, documented: Path
) -> None:
    port = {"8011": str(word_game.port)}
    listed = run_command(cli, "eval-list-tasks", port)
    assert "3 tasks" in listed.out and "crane" in listed.out

    played = run_command(cli, "eval-run", port)
    assert "Played 12 rollouts; 12 of 12 in results" in played.out
    rows = read_rows(documented / "results")
    (documented / "results" / "rollouts.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows[:7])
    )
    resumed = run_command(cli, "eval-resume", port)
    assert "Played 5 rollouts; 12 of 12" in resumed.out
    assert len({(r["task_key"], r["sample"]) for r in read_rows(documented / "results")}) == 12
    for name in ("summary.json", "run.json", "plot.png"):
        assert (documented / "results" / name).is_file()

    rescored = run_command(cli, "eval-rescore", {})
    assert "12 unchanged, 0 changed" in rescored.out


@pytest.mark.slow
def test_a_served_model_is_evaluated_as_printed(
    cli: Any, word_game: Any, documented: Path, model_server: tuple[str, str]
) -> None:
    base_url, folder = model_server
    model_port = base_url.rsplit(":", 1)[1].removesuffix("/v1")
    serve = doc_block(DOC, "eval-model-serve").code.strip()
    assert serve == SERVE_COMMAND.format(folder="my-model", port=8000)
    replacements = {"8011": str(word_game.port), "my-model": folder, "8000": model_port}
    result = run_command(cli, "eval-model", replacements)
    assert "12 of 12 in model-results" in result.out
    assert len(read_rows(documented / "model-results")) == 12
