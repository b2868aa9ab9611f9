"""The coding environment's quality declarations, for ``openenv validate --level quality``.

- :func:`oracle`: a policy (as ``openenv eval`` plays it) that sends each task's prompt
  completed by its canonical solution, then stops;
- :func:`degenerate`: the non-solutions of :mod:`coding_env.server.degenerate` (an entry point
  returning ``None`` or its argument, the prompt's helpers redefined as the identity or as
  zero), among them those that fooled an earlier grader (``KNOWN_EXPLOITS``);
- :func:`secrets`: what the agent must never read: the canonical solution and the hidden
  tests' asserts.

They run in the validating process, never in the server: the agent cannot reach them.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from coding_env.server.degenerate import KNOWN_EXPLOITS, degenerate_solutions
from coding_env.server.tasks import Task, TaskSet

__all__ = ["degenerate", "oracle", "secrets"]

_TASK_ID = re.compile(r'"task_id": "([^"]+)"')


@functools.cache
def _tasks() -> TaskSet:
    return TaskSet.humaneval()


def _task(row: dict[str, Any]) -> Task:
    return _tasks().get(str(row["reset"].get("task_id") or row["key"]))


def oracle(messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Any:
    """The canonical solution of the task the first message names, sent once."""
    if any(message["role"] == "tool" for message in messages):
        return "Done."
    found = _TASK_ID.search(str(messages[0]["content"]))
    if found is None:
        return "No task is loaded."
    task = _tasks().get(found.group(1))
    names = [tool["function"]["name"] for tool in tools]
    tool = next(n for n in names if n in ("code_action", "run_python"))
    code = task.prompt + task.canonical_solution
    return {"tool_calls": [{"function": {"name": tool, "arguments": {"code": code}}}]}


def degenerate(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's non-solutions, each one step of code; those that fooled an earlier grader
    say what it gave them."""
    task = _task(row)
    return [
        {
            "name": solution.name,
            "actions": [{"code": solution.code}],
            "note": _earned(task.task_id, solution.name),
        }
        for solution in degenerate_solutions(task)
    ]


def _earned(task_id: str, name: str) -> str:
    earned = KNOWN_EXPLOITS.get((task_id, name))
    return "" if earned is None else f"an earlier grader gave it {earned:.3g}"


def secrets(row: dict[str, Any]) -> list[str]:
    """The canonical solution and the hidden tests' asserts of the task."""
    task = _task(row)
    asserts = [line for line in task.test.splitlines() if "assert" in line]
    return [task.canonical_solution, *asserts]
