"""The end of a run: the summary of every row in a results folder (return, pass@k per task,
usage, this run's pace) written as ``summary.json`` with its plot, and the rule that fails a run
with too many infrastructure errors.

Layer: client.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openenv_hub.eval.passk import summarize
from openenv_hub.eval.plot import write_plot
from openenv_hub.eval.results import ResultsFolder

__all__ = ["RunPace", "errors_over_limit", "write_summary"]


@dataclass(frozen=True)
class RunPace:
    """What this run played (a resume's earlier rollouts not included), and how fast."""

    played: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        wall = self.wall_s
        return {
            "played": self.played,
            "wall_s": round(wall, 3),
            "rollouts_per_s": round(self.played / wall, 3) if wall > 0 else None,
            "completion_tokens_per_s": (
                round(self.completion_tokens / wall, 3)
                if wall > 0 and self.completion_tokens
                else None
            ),
        }


def write_summary(
    results: ResultsFolder,
    *,
    rollouts_per_task: int,
    expected: list[str],
    pace: RunPace | None = None,
) -> dict[str, Any]:
    """Summarize every row of ``results`` (``expected`` names the run's tasks, ``split/key``),
    write ``summary.json`` and the plot of the rows without error; return the summary."""
    rows = results.rows()
    summary = summarize(rows, rollouts_per_task=rollouts_per_task, expected=expected)
    summary["last_run"] = (pace or RunPace()).as_dict()
    results.write_json(ResultsFolder.SUMMARY, summary)
    scored = [row for row in rows if row.get("finish") != "error"]
    write_plot(scored, summary, results.path / ResultsFolder.PLOT)
    return summary


def errors_over_limit(summary: dict[str, Any], fail_on_error: float) -> bool:
    """Whether the share of rollouts that ended in an infrastructure error is above
    ``fail_on_error`` (at 0, any error is)."""
    errors = summary["errors"]
    total = errors + summary["rollouts"]
    return bool(errors) and (fail_on_error <= 0 or errors / total > fail_on_error)
