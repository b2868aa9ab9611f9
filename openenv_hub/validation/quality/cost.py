"""The ``cost`` check: how long a reset and a step take (the median and the 99th percentile of
every one the scorecard timed), how much memory a session adds, and how long the server took
to start; held to ``quality.cost``'s bounds.

Latencies are medians, so one slow answer on a loaded machine does not fail an environment;
memory and start time are known only for a server this validation started itself.

Layer: client.
"""

from __future__ import annotations

import math

from openenv_hub.checks.scorecard import QualityCheck
from openenv_hub.validation.quality.run import PHASES, QualityRun
from openenv_hub.validation.quality.verdicts import could_not_check

__all__ = ["check_cost", "percentile"]


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (not empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def check_cost(run: QualityRun) -> QualityCheck:
    timings = run.timings
    unfinished = could_not_check(run, "cost", PHASES)
    if unfinished is not None:  # latencies of a run the instrument cut short prove nothing
        return unfinished
    if not timings.resets:
        return QualityCheck("cost", "error", "no reset was answered, so none was timed")
    measured: dict[str, float] = {}
    for name, values in (("reset", timings.resets), ("step", timings.steps)):
        if values:
            measured[f"{name}_p50_ms"] = round(percentile(values, 0.5) * 1000, 1)
            measured[f"{name}_p99_ms"] = round(percentile(values, 0.99) * 1000, 1)
            measured[f"{name}s"] = len(values)
    if "per_session_mb" in run.memory:
        measured["memory_per_session_mb"] = run.memory["per_session_mb"]
        measured["server_memory_mb"] = run.memory["server_mb"]
    if run.start_s is not None:
        measured["start_s"] = round(run.start_s, 2)
    over = _over(run, measured)
    shown = ", ".join(f"{k} {v:g}" for k, v in measured.items() if k not in ("resets", "steps"))
    unknown = _unmeasured(run)
    evidence = (*over, *unknown)
    if over:
        hint = "Make it faster or leaner, or declare the bounds it needs in quality.cost."
        return QualityCheck("cost", "fail", over[0], evidence, measured, hint)
    return QualityCheck("cost", "pass", shown, evidence, measured)


def _over(run: QualityRun, measured: dict[str, float]) -> list[str]:
    bounds = run.spec.quality.cost
    limits = (
        ("reset_p50_ms", bounds.reset_p50_s * 1000, "a reset's median", "ms"),
        ("step_p50_ms", bounds.step_p50_s * 1000, "a step's median", "ms"),
        ("memory_per_session_mb", bounds.memory_per_session_mb, "memory per session", "MB"),
        ("start_s", bounds.start_s, "the start", "s"),
    )
    return [
        f"{label} is {measured[key]:g} {unit}, above the bound of {limit:g} {unit}"
        for key, limit, label, unit in limits
        if limit is not None and key in measured and measured[key] > limit
    ]


def _unmeasured(run: QualityRun) -> list[str]:
    notes = []
    if run.pid is None:
        notes.append("memory and start time: not measured (a server this validation did not start)")
    elif not run.memory:
        notes.append("memory: not measured (no sessions were open side by side)")
    return notes
