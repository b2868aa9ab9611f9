"""Two runs on the same tasks, side by side: per-task differences, pass@k of each with a
confidence interval, and a paired test of the difference.

The confidence interval of pass@k is a percentile bootstrap over tasks (tasks drawn with
replacement, ``resamples`` times, pass@k recomputed on each draw). The paired test is a
sign-flip permutation test over the tasks both runs played: under the null hypothesis that
the runs are alike, the sign of each task's difference in pass rate is a coin flip; the p-value
is the share of sign assignments whose mean difference is at least as far from zero as the one
observed (two-sided; exact up to 16 tasks, else ``resamples`` random assignments). Rows that
ended in an infrastructure error count in neither run. Randomness is seeded: the same folders
give the same figures.

Layer: client.
"""

from __future__ import annotations

import itertools
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from openenv_hub.eval.passk import pass_at_k

__all__ = ["Comparison", "TaskDifference", "compare_runs"]


@dataclass(frozen=True)
class TaskDifference:
    """One task in both runs: rollouts and passes in each, and B's pass rate less A's."""

    task: str
    rollouts: tuple[int, int]
    passed: tuple[int, int]

    @property
    def rates(self) -> tuple[float, float]:
        return (self.passed[0] / self.rollouts[0], self.passed[1] / self.rollouts[1])

    @property
    def difference(self) -> float:
        return self.rates[1] - self.rates[0]


@dataclass(frozen=True)
class Comparison:
    """Run A against run B.

    Attributes:
        tasks: The tasks both runs played (with at least one rollout without error each).
        only_a, only_b: Tasks one run played and the other did not.
        pass_at_k: For each k both runs reach, ``{"a": (value, low, high), "b": ...}``.
        mean_difference: The mean over tasks of B's pass rate less A's.
        p_value: The paired test's two-sided p-value (1.0 without tasks).
        errors: Rows with an infrastructure error in each run (left out).
    """

    tasks: list[TaskDifference]
    only_a: list[str]
    only_b: list[str]
    pass_at_k: dict[str, dict[str, tuple[float, float, float]]]
    mean_difference: float
    p_value: float
    errors: tuple[int, int]
    confidence: float = 0.95


def compare_runs(
    a: list[dict[str, Any]],
    b: list[dict[str, Any]],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare the rows of run ``a`` with those of run ``b``."""
    counts_a, counts_b = _counts(a), _counts(b)
    common = sorted(set(counts_a) & set(counts_b))
    tasks = [
        TaskDifference(t, (counts_a[t][0], counts_b[t][0]), (counts_a[t][1], counts_b[t][1]))
        for t in common
    ]
    top = min((min(d.rollouts) for d in tasks), default=0)
    rng = random.Random(seed)
    pass_k = {
        str(k): {
            side: _with_interval([counts[t] for t in common], k, rng, resamples, confidence)
            for side, counts in (("a", counts_a), ("b", counts_b))
        }
        for k in range(1, top + 1)
    }
    differences = [d.difference for d in tasks]
    return Comparison(
        tasks=tasks,
        only_a=sorted(set(counts_a) - set(counts_b)),
        only_b=sorted(set(counts_b) - set(counts_a)),
        pass_at_k=pass_k,
        mean_difference=statistics.fmean(differences) if differences else 0.0,
        p_value=_sign_flip_p(differences, rng, resamples),
        errors=(_errors(a), _errors(b)),
        confidence=confidence,
    )


def _counts(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Each task's (rollouts, passes), rows with an error left out."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        if row.get("finish") == "error":
            continue
        entry = counts[f"{row['split']}/{row['task_key']}"]
        entry[0] += 1
        entry[1] += bool(row["passed"])
    return {task: (n, c) for task, (n, c) in counts.items()}


def _errors(rows: list[dict[str, Any]]) -> int:
    return sum(1 for r in rows if r.get("finish") == "error")


def _with_interval(
    counts: list[tuple[int, int]], k: int, rng: random.Random, resamples: int, confidence: float
) -> tuple[float, float, float]:
    values = [pass_at_k(n, c, k) for n, c in counts if n >= k]
    if not values:
        return (0.0, 0.0, 0.0)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[int(tail * (resamples - 1))]
    high = means[int((1 - tail) * (resamples - 1))]
    return (statistics.fmean(values), low, high)


def _sign_flip_p(differences: list[float], rng: random.Random, resamples: int) -> float:
    if not differences or all(d == 0 for d in differences):
        return 1.0
    observed = abs(sum(differences)) - 1e-12
    if len(differences) <= 16:
        flips: Any = itertools.product((1, -1), repeat=len(differences))
        total = 2 ** len(differences)
    else:
        flips = ([rng.choice((1, -1)) for _ in differences] for _ in range(resamples))
        total = resamples
    extreme = sum(
        1
        for signs in flips
        if abs(sum(s * d for s, d in zip(signs, differences, strict=True))) >= observed
    )
    return float(extreme / total)
