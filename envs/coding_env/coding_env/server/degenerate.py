"""Solutions that solve nothing, as data: what a grader must give no reward, for any task.

Each is code an agent could send in one step. :func:`degenerate_solutions` makes them for a
task: an entry point that returns ``None``, one that returns its first argument, and, where the
prompt defines helpers the tests call (HumanEval/38's ``encode_cyclic``, /50's
``encode_shift``, /32's ``poly``), those helpers redefined as the identity or as zero along with
the entry point. A grader that took the candidate's helpers, or counted ``assert True`` as a
test, rewarded some of them (:data:`KNOWN_EXPLOITS`); the tests and a quality check of the task
set reuse this list to show that none earns anything.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from coding_env.server.tasks import Task, reference_source

__all__ = ["KNOWN_EXPLOITS", "Degenerate", "degenerate_solutions", "helpers_of"]

#: (task, solution name): what each earned from the grader that graded with the candidate's
#: helpers and counted every statement with an ``assert`` as a test.
KNOWN_EXPLOITS = {
    ("HumanEval/38", "identity helpers"): 1.0,
    ("HumanEval/50", "identity helpers"): 1.0,
    ("HumanEval/32", "zero helpers"): 1.0,
    ("HumanEval/83", "returns None"): 2 / 7,
}


@dataclass(frozen=True)
class Degenerate:
    """One non-solution: a name saying what it does, and the code of the step."""

    name: str
    code: str


def helpers_of(task: Task) -> list[str]:
    """The functions the task's prompt defines besides the entry point, in order."""
    module = ast.parse(reference_source(task.prompt, task.entry_point))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return [node.name for node in module.body if isinstance(node, functions)]


def degenerate_solutions(task: Task) -> list[Degenerate]:
    """The non-solutions of ``task``: two for every task, two more where it has helpers."""
    entry = task.entry_point
    solutions = [
        Degenerate("returns None", _functions([entry], "None")),
        Degenerate("returns its argument", _functions([entry], "args[0] if args else None")),
    ]
    helpers = helpers_of(task)
    if helpers:
        solutions += [
            Degenerate("identity helpers", _functions([*helpers, entry], "args[0]")),
            Degenerate("zero helpers", _functions([*helpers, entry], "0")),
        ]
    return solutions


def _functions(names: list[str], returned: str) -> str:
    return "".join(f"def {name}(*args, **kwargs):\n    return {returned}\n\n" for name in names)
