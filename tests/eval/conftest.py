"""Fixtures of the evaluation tests: the word game served on 127.0.0.1, a taskset of three of
its words, and a policy that guesses words in an order fixed by the rollout's seed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

#: Three tasks of the word game: seeds 0, 1 and 2 hide "brick", "pious" and "crane".
WORD_TASKS = [
    {"key": "brick", "reset": {"seed": 0}, "prompt": "Find the secret word."},
    {"key": "pious", "reset": {"seed": 1}, "prompt": "Find the secret word."},
    {"key": "crane", "reset": {"seed": 2}, "prompt": "Find the secret word."},
]

GUESS_POLICY = '''
import random
import time

WORDS = ["crane", "slate", "pious", "mango", "fjord", "glyph", "brick", "stove", "plumb", "dwarf"]
PAUSE_S = 0.0


def guess(messages, tools, seed):
    """Guess six of the ten words, in an order fixed by the seed."""
    time.sleep(PAUSE_S)
    order = random.Random(seed).sample(WORDS, 6)
    turn = sum(1 for m in messages if m["role"] == "assistant")
    return {"tool_calls": [{"name": "guess", "arguments": {"word": order[turn]}}]}


def slow_guess(messages, tools, seed):
    time.sleep(0.4)
    return guess(messages, tools, seed)
'''


@pytest.fixture
def word_game(serve: Callable[..., Any]) -> Any:
    """The word game of examples/word_game.py, served on 127.0.0.1."""
    from word_game import app

    return serve(app)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding ``tasks/test.jsonl`` and the ``guesser`` policy module; the cwd."""
    (tmp_path / "tasks").mkdir()
    lines = "".join(json.dumps(task) + "\n" for task in WORD_TASKS)
    (tmp_path / "tasks" / "test.jsonl").write_text(lines)
    (tmp_path / "guesser.py").write_text(GUESS_POLICY)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    sys.modules.pop("guesser", None)


def read_rows(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "rollouts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]
