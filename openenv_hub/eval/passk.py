"""pass@k with the unbiased estimator, and the summary of a run's rollouts.

Layer: client.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

__all__ = ["pass_at_k", "summarize", "usage_totals"]


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


def summarize(
    rows: Iterable[dict[str, Any]], *, rollouts_per_task: int, expected: Iterable[str] = ()
) -> dict[str, Any]:
    """Mean and spread of the return, pass@k for every k up to ``rollouts_per_task`` (averaged
    over the tasks with at least k rollouts), token usage, and a per-task profile.

    Rows that ended in an infrastructure error (``finish: "error"``) count only in ``errors``
    and ``errors_by_kind``: not in the return, not in pass@k. ``incomplete_tasks`` lists the
    tasks left with fewer than ``rollouts_per_task`` rollouts without error; ``complete`` says
    there are none and no errors. ``expected`` names (``split/key``) tasks that count as
    incomplete when no row holds them.
    """
    rows = list(rows)
    failed = [r for r in rows if r.get("finish") == "error"]
    scored = [r for r in rows if r.get("finish") != "error"]
    returns = [float(r["return"]) for r in scored]
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for name in expected:
        by_task[name] = []
    for row in rows:
        group = by_task[f"{row['split']}/{row['task_key']}"]  # a task of errors only is listed
        if row.get("finish") != "error":
            group.append(row)
    tasks: dict[str, dict[str, Any]] = {
        name: {
            "rollouts": len(group),
            "passed": sum(bool(r["passed"]) for r in group),
            "mean_return": statistics.fmean(float(r["return"]) for r in group) if group else None,
        }
        for name, group in sorted(by_task.items())
    }
    incomplete = sorted(name for name, t in tasks.items() if t["rollouts"] < rollouts_per_task)
    return {
        "rollouts": len(scored),
        "tasks": len(tasks),
        "errors": len(failed),
        "errors_by_kind": dict(
            sorted(Counter(r.get("error_kind") or "unknown" for r in failed).items())
        ),
        "incomplete_tasks": incomplete,
        "complete": not failed and not incomplete,
        "return": {
            "mean": statistics.fmean(returns) if returns else 0.0,
            "std": statistics.pstdev(returns) if returns else 0.0,
            "min": min(returns, default=0.0),
            "max": max(returns, default=0.0),
        },
        "pass_at_k": _pass_at_ks(tasks, rollouts_per_task),
        "usage": usage_totals(rows),
        "per_task": tasks,
    }


def _pass_at_ks(tasks: dict[str, dict[str, Any]], rollouts_per_task: int) -> dict[str, float]:
    pass_k = {}
    for k in range(1, rollouts_per_task + 1):
        values = [
            pass_at_k(t["rollouts"], t["passed"], k) for t in tasks.values() if t["rollouts"] >= k
        ]
        if values:
            pass_k[str(k)] = statistics.fmean(values)
    return pass_k


def usage_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens the endpoint reported over ``rows`` (None where it reported none), the finish
    reasons of their turns, and the seconds spent waiting for the model; ``discarded``: the
    turns of attempts that failed and were played again (billed, but in no row's result)."""
    turns = [u for r in rows for u in r.get("usage") or []]
    reasons = Counter(str(u.get("finish_reason")) for u in turns if u.get("finish_reason"))
    return {
        "turns": len(turns),
        "prompt_tokens": _total(turns, "prompt_tokens"),
        "completion_tokens": _total(turns, "completion_tokens"),
        "finish_reasons": dict(sorted(reasons.items())),
        "policy_s": round(sum(float(r.get("policy_s") or 0.0) for r in rows), 3),
        "discarded": {
            name: sum(int(r.get(f"discarded_{name}") or 0) for r in rows)
            for name in ("turns", "prompt_tokens", "completion_tokens")
        },
    }


def _total(turns: list[dict[str, Any]], name: str) -> int | None:
    known = [u[name] for u in turns if u.get(name) is not None]
    return sum(known) if known else None
