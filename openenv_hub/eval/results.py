"""A results folder: one JSON line per rollout, written as each ends, plus the run's settings,
its summary and a plot.

``rollouts.jsonl`` is appended to and flushed to disk row by row, so a crash or Ctrl-C loses at
most the rollouts in flight; a line cut short by a kill is dropped when the folder is read
again. ``run.json`` holds the settings, ``summary.json`` the summary, ``plot.png`` the plot.

Layer: client.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError

__all__ = ["ResultsFolder"]


class ResultsFolder:
    """The files of one evaluation run under ``path``."""

    ROLLOUTS = "rollouts.jsonl"
    RUN = "run.json"
    SUMMARY = "summary.json"
    PLOT = "plot.png"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    @property
    def rollouts_file(self) -> Path:
        return self.path / self.ROLLOUTS

    def has_rollouts(self) -> bool:
        return self.rollouts_file.is_file() and self.rollouts_file.stat().st_size > 0

    def rows(self) -> list[dict[str, Any]]:
        """Every whole row written so far (a last line cut short by a kill is left out)."""
        if not self.rollouts_file.is_file():
            return []
        rows = []
        for line in self.rollouts_file.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return rows

    def done(self) -> set[tuple[str, str, int]]:
        """The (split, task key, sample) of every rollout written."""
        return {(r["split"], r["task_key"], int(r["sample"])) for r in self.rows()}

    def start(self, settings: dict[str, Any], *, resume: bool) -> None:
        """Create the folder for a new run, or check that ``settings`` match the run resumed."""
        run_file = self.path / self.RUN
        if resume and run_file.is_file():
            recorded = json.loads(run_file.read_text(encoding="utf-8"))
            changed = sorted(k for k in settings if recorded.get(k) != settings[k])
            if changed:
                raise ConfigurationError(
                    f"{self.path} holds a run with other settings ({', '.join(changed)}).",
                    hint="Resume with the same settings, or write to another folder.",
                )
        elif self.has_rollouts() and not resume:
            raise ConfigurationError(
                f"{self.path} already holds rollouts.",
                hint="Pass --resume to play only the missing ones, or choose another folder.",
            )
        self.path.mkdir(parents=True, exist_ok=True)
        self._drop_cut_line()
        self.write_json(self.RUN, settings)

    def append(self, row: dict[str, Any]) -> None:
        """Write one rollout and flush it to disk."""
        with self.rollouts_file.open("a", encoding="utf-8") as file:
            file.write(json.dumps(row, ensure_ascii=False) + "\n")
            file.flush()
            os.fsync(file.fileno())

    def write_json(self, name: str, value: Any) -> Path:
        target = self.path / name
        target.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return target

    def read_json(self, name: str) -> Any:
        target = self.path / name
        if not target.is_file():
            raise ConfigurationError(
                f"{self.path} has no {name}.", hint="Pass the folder an 'openenv eval' wrote."
            )
        return json.loads(target.read_text(encoding="utf-8"))

    def _drop_cut_line(self) -> None:
        """Remove a last line left without its newline by a kill, so appends start clean."""
        if not self.has_rollouts():
            return
        data = self.rollouts_file.read_bytes()
        if not data.endswith(b"\n"):
            self.rollouts_file.write_bytes(data[: data.rfind(b"\n") + 1])
