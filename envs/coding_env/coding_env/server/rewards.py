"""The reward of a graded step: a function of the hidden tests' result.

Pass your own to :class:`~coding_env.server.environment.CodingEnvironment` (``reward_fn=``), e.g.
all-or-nothing::

    def all_or_nothing(result: GradeResult) -> float:
        return 1.0 if result.total and result.passed == result.total else 0.0
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["GradeResult", "RewardFn", "fraction_passed"]


@dataclass(frozen=True)
class GradeResult:
    """How the session's code did on a task's hidden tests (run inside the sandbox).

    Attributes:
        task_id: The task graded.
        passed: Tests that passed.
        total: Tests the task has.
        timed_out: The tests ran out of time (a test hung); ``passed`` is then 0.
        missing_entry_point: The code did not define the function the tests call.
    """

    task_id: str
    passed: int
    total: int
    timed_out: bool = False
    missing_entry_point: bool = False


RewardFn = Callable[[GradeResult], float]


def fraction_passed(result: GradeResult) -> float:
    """The default reward: the fraction of tests passed (0 when they timed out)."""
    if result.timed_out or result.total == 0:
        return 0.0
    return result.passed / result.total
