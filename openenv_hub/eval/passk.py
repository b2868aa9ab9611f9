"""pass@k with the unbiased estimator, and the summary of a run's rollouts.

Layer: client.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

__all__ = ["pass_at_k", "summarize"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` samples drawn without replacement from ``n``, of
    which ``c`` passed, passes: ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021).

    Example::

        >>> pass_at_k(4, 1, 2)
        0.5
    """
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def summarize(rows: Iterable[dict[str, Any]], *, rollouts_per_task: int) -> dict[str, Any]:
    """Mean and spread of the return, pass@k for every k up to ``rollouts_per_task`` (averaged
    over the tasks with at least k rollouts), errors, and a per-task profile."""
    rows = list(rows)
    returns = [float(r["return"]) for r in rows]
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_task[f"{row['split']}/{row['task_key']}"].append(row)
    tasks: dict[str, dict[str, Any]] = {
        name: {
            "rollouts": len(group),
            "passed": sum(bool(r["passed"]) for r in group),
            "mean_return": statistics.fmean(float(r["return"]) for r in group),
        }
        for name, group in sorted(by_task.items())
    }
    pass_k = {}
    for k in range(1, rollouts_per_task + 1):
        values = [
            pass_at_k(t["rollouts"], t["passed"], k) for t in tasks.values() if t["rollouts"] >= k
        ]
        if values:
            pass_k[str(k)] = statistics.fmean(values)
    return {
        "rollouts": len(rows),
        "tasks": len(tasks),
        "errors": sum(1 for r in rows if r.get("error")),
        "return": {
            "mean": statistics.fmean(returns) if returns else 0.0,
            "std": statistics.pstdev(returns) if returns else 0.0,
            "min": min(returns, default=0.0),
            "max": max(returns, default=0.0),
        },
        "pass_at_k": pass_k,
        "per_task": tasks,
    }
