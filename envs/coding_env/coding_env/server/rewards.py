"""The reward of a graded step: a function of the hidden tests' result, always in [0, 1].

The default, :func:`all_passed`, is HumanEval's own measure: 1.0 when every hidden test passes,
else 0.0. A grading then tells the agent one bit (with ``timed_out``, one of three outcomes),
the least a reward that depends on the code can. A count of the tests passed tells it more, and
more than the fraction seems to: the tests run one after another against one candidate process,
so a candidate that answers correctly only for its first N calls learns from the count where
the hidden tests' calls fall, and so the sizes of the hidden inputs (log2(tests + 1) bits per
grading, 3 for HumanEval/0's seven tests). Observations therefore carry ``passed`` (all passed
or not) and no count.

Pass another function of a :class:`GradeResult` as ``reward_fn=`` (to
:func:`~coding_env.server.app.build_app` or ``CodingEnvironment.configured``):
:func:`fraction_passed` gives partial credit, and with it the count above.

Whatever the function, a step's reward is in :data:`REWARD_RANGE`: a result outside it, or one
that is not a finite number, is rejected (the step fails with :class:`RewardOutOfRange`, naming
the function and the value), never clamped into a reward nobody chose.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "REWARD_RANGE",
    "GradeResult",
    "RewardFn",
    "RewardOutOfRange",
    "all_passed",
    "checked_reward",
    "fraction_passed",
]

REWARD_RANGE = (0.0, 1.0)


@dataclass(frozen=True)
class GradeResult:
    """How the session's code did on a task's hidden tests (run in a grader's own sandbox).

    Attributes:
        task_id: The task graded.
        passed: Tests that passed, between 0 and ``total``.
        total: Tests the task has.
        timed_out: The tests ran out of time (a test hung); ``passed`` is then 0.
        missing_entry_point: The code did not define the function the tests call.
        error: The grading itself failed (its sandbox could not start or ended early, or the
            task's own code, its prompt's helpers or its tests' preamble, raised); ``passed``
            is then 0.
    """

    task_id: str
    passed: int
    total: int
    timed_out: bool = False
    missing_entry_point: bool = False
    error: bool = False


RewardFn = Callable[[GradeResult], float]


class RewardOutOfRange(ValueError):
    """A reward function returned something outside :data:`REWARD_RANGE`."""


def all_passed(result: GradeResult) -> float:
    """The default reward: 1.0 when every hidden test passed, else 0.0."""
    passed = not result.timed_out and result.total > 0 and result.passed == result.total
    return 1.0 if passed else 0.0


def fraction_passed(result: GradeResult) -> float:
    """Partial credit: the fraction of tests passed (0 when they timed out). It tells the agent
    how many passed, which the module's docstring says is more than it seems."""
    if result.timed_out or result.total == 0:
        return 0.0
    return result.passed / result.total


def checked_reward(reward_fn: RewardFn, result: GradeResult) -> float:
    """``reward_fn(result)``, if it is a finite number in :data:`REWARD_RANGE`.

    Raises:
        RewardOutOfRange: it is not.
    """
    value = reward_fn(result)
    low, high = REWARD_RANGE
    name = getattr(reward_fn, "__name__", repr(reward_fn))
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RewardOutOfRange(f"reward_fn {name} returned {value!r}, not a number")
    if not math.isfinite(value) or not low <= value <= high:
        raise RewardOutOfRange(
            f"reward_fn {name} returned {value!r}, outside the coding environment's reward "
            f"range [{low:g}, {high:g}]; make it return a value in that range"
        )
    return float(value)
