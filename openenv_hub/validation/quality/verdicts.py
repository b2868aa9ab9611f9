"""What a check says when the episodes it needs could not be played.

Layer: client.
"""

from __future__ import annotations

from collections.abc import Iterable

from openenv_hub.checks.scorecard import QualityCheck
from openenv_hub.validation.quality.run import QualityRun

__all__ = ["RUN_AGAIN", "could_not_check"]

RUN_AGAIN = (
    "The instrument failed, not the environment: is the server up and not overloaded? "
    "Run the validation again."
)


def could_not_check(run: QualityRun, name: str, phases: Iterable[str]) -> QualityCheck | None:
    """An ``error`` result when a phase ``name`` needs could not be played (a ``fail`` when the
    manifest's tasks are wrong), else None."""
    if "tasks" in run.problems:
        hint = "Fix quality.tasks (or taskset) in openenv.yaml."
        return QualityCheck(name, "fail", run.problems["tasks"], hint=hint)
    for phase in phases:
        reason = run.errors.get(phase)
        if reason is not None:
            summary = reason or f"the {phase} phase did not run"
            return QualityCheck(name, "error", summary, hint=RUN_AGAIN)
    return None
