"""Tasks made by a generator: a function that makes the task of a seed, so the task with id N is
the one made from seed N, the same every time (procedurally generated tasks, as reasoning-gym
makes them).

The generator takes an ``int`` and returns the task's row, a JSON object like a line of a JSON
Lines taskset without its key: ``prompt`` (what the model reads first), and anything the
environment needs (the answer, the puzzle). The environment calls the same function in
``reset(task_id=N)``; an evaluation starts task N with ``reset(task_id=N)`` unless the row has
a ``reset`` object of its own.

Example:
    >>> def make_sum(seed):
    ...     return {"prompt": f"What is {seed} + {seed}?", "answer": 2 * seed}
    >>> [t.key for t in generated_tasks(make_sum, split="test", size=1000, limit=3)]
    ['0', '1', '2']
    >>> generated_task(make_sum, 7, split="test").reset
    {'task_id': 7}

Layer: client.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval.tasksets import Task, task_from_row
from openenv_hub.support.folder_imports import import_from_folder

__all__ = ["TaskGenerator", "generated_task", "generated_tasks", "load_generator"]

#: A function making the row of the task of a seed.
TaskGenerator = Callable[[int], dict[str, Any]]


def load_generator(path: str, *, root: Path | None = None) -> TaskGenerator:
    """The generator named ``module:function``, imported with ``root`` (an environment
    folder) first on ``sys.path``."""
    module_name, _, attribute = path.partition(":")
    try:
        module = import_from_folder(module_name, root)
    except ImportError as exc:
        raise ConfigurationError(
            f"Could not import the task generator module {module_name!r}: {exc}",
            hint="Fix 'taskset: generator:' in openenv.yaml (module:function, from the "
            "environment folder).",
        ) from exc
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigurationError(
            f"{module_name!r} has no function {attribute!r} to make tasks.",
            hint=f"Define 'def {attribute}(seed: int) -> dict' in {module_name}.",
        )
    return function  # type: ignore[no-any-return]


def generated_task(generator: TaskGenerator, seed: int, *, split: str) -> Task:
    """The task of ``seed``: keyed by the seed, started with ``reset(task_id=seed)``.

    Raises:
        ConfigurationError: The generator failed, or made something that is not a JSON object.
    """
    try:
        row = generator(seed)
        json.dumps(row)
    except Exception as exc:
        raise ConfigurationError(
            f"The task generator failed on seed {seed}: {type(exc).__name__}: {exc}",
            hint="A generator returns a JSON object (a dict of plain values) for every seed.",
        ) from exc
    if not isinstance(row, dict):
        raise ConfigurationError(
            f"The task generator made {type(row).__name__} for seed {seed}, not a dict.",
            hint="Return the task's row, e.g. {'prompt': ..., 'answer': ...}.",
        )
    reset = row.get("reset")
    if not isinstance(reset, dict):
        reset = {"task_id": seed}
    return task_from_row({**row, "key": str(seed), "reset": reset}, split)


def generated_tasks(
    generator: TaskGenerator, *, split: str, size: int, limit: int | None = None
) -> list[Task]:
    """The tasks of seeds ``0`` to ``size - 1`` (the first ``limit`` of them when given)."""
    count = size if limit is None else min(size, limit)
    return [generated_task(generator, seed, split=split) for seed in range(count)]
