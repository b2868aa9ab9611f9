"""The step history of one browser tab: table rows and a JSONL export.

Layer: ui.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["HISTORY_COLUMNS", "MAX_HISTORY", "HistoryEntry", "table_rows", "to_jsonl"]

HISTORY_COLUMNS = ["#", "action", "reward", "done", "time"]
MAX_HISTORY = 1000
_ACTION_CHARS = 120


@dataclass(frozen=True)
class HistoryEntry:
    """One reset, step or tool call and what came back.

    Attributes:
        step: The session's step count after the call (0 for a reset).
        kind: ``"reset"``, ``"step"`` or ``"tool"``.
        action: The action (or reset parameters, or tool arguments) as sent.
        reward: Reward of the returned observation.
        done: Whether the episode ended.
        observation: The observation as the wire sends it.
        timestamp: When the call finished (seconds since the epoch).
        duration_ms: How long the environment took.
        tool_name: The tool called, for ``kind == "tool"``.
    """

    step: int
    kind: str
    action: dict[str, Any]
    reward: Any
    done: bool
    observation: Any
    timestamp: float
    duration_ms: float
    tool_name: str | None = None

    def label(self) -> str:
        """A one-line description of the action for the history table."""
        text = json.dumps(self.action, separators=(", ", ": "), default=str)
        if self.kind == "reset":
            text = f"reset({', '.join(f'{k}={v!r}' for k, v in self.action.items())})"
        elif self.kind == "tool":
            text = f"{self.tool_name}({text})"
        return text if len(text) <= _ACTION_CHARS else text[: _ACTION_CHARS - 1] + "…"

    def time_text(self) -> str:
        clock = dt.datetime.fromtimestamp(self.timestamp).strftime("%H:%M:%S")
        return f"{clock} ({self.duration_ms:.0f} ms)"


def reward_cell(entry: HistoryEntry) -> Any:
    """The reward cell: the value, followed by the rubric's breakdown when the step carries one
    (``0.531 (tool_succeeded 1, message_length 0.0625)``)."""
    if entry.reward is None:
        return ""
    metadata = entry.observation.get("metadata") if isinstance(entry.observation, dict) else None
    breakdown = metadata.get("reward_breakdown") if isinstance(metadata, dict) else None
    if not isinstance(breakdown, dict) or not breakdown:
        return entry.reward
    parts = ", ".join(f"{name} {value:.3g}" for name, value in breakdown.items())
    return f"{entry.reward:.3g} ({parts})"


def table_rows(entries: list[HistoryEntry]) -> list[list[Any]]:
    """Rows for the history table, newest last."""
    return [
        [e.step, e.label(), reward_cell(e), str(e.done).lower(), e.time_text()] for e in entries
    ]


def to_jsonl(entries: list[HistoryEntry]) -> str:
    """One JSON object per line, with an ISO 8601 ``time`` field."""
    lines = []
    for entry in entries:
        record = asdict(entry)
        record["time"] = dt.datetime.fromtimestamp(entry.timestamp, dt.timezone.utc).isoformat()
        if record["tool_name"] is None:
            del record["tool_name"]
        lines.append(json.dumps(record, default=str))
    return "\n".join(lines) + ("\n" if lines else "")
