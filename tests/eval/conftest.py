"""The evaluation tests' fixtures, defined in tests/eval_support.py (docs/eval.md's test uses
them too)."""

from eval_support import model_server, task_game, word_game, workdir

__all__ = ["model_server", "task_game", "word_game", "workdir"]
