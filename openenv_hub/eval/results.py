"""A results folder: one JSON line per rollout, written as each ends, plus the run's settings,
its summary and a plot.

``rollouts.jsonl`` is appended to and flushed to disk row by row, so a crash or Ctrl-C loses at
most the rollouts in flight; a line cut short by a kill is dropped when the folder is read
again. A rollout played again (an error row, on ``--resume``) is appended too: the last row of a
(split, task, sample) is the one that counts. ``run.json`` holds the settings, ``tasks.json``
the digest of each task played, ``summary.json`` the summary, ``plot.png`` the plot.

One process writes to a folder at a time: :meth:`ResultsFolder.start` takes an exclusive lock
(``.lock``, released when the process ends, however it ends) and refuses a second writer.

Layer: client.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval.tasksets import Task

__all__ = ["ResultsFolder"]

#: Settings a resume may change: the tasks to play (checked task by task instead), the
#: environment's URL (checked by what the server says it is instead), and how failures are
#: retried, none of which changes a result.
RESUMABLE_CHANGES = frozenset(
    {
        "env",
        "limit",
        "expected_rollouts",
        "taskset_digest",
        "max_retries",
        "request_timeout_s",
        "rollout_timeout_s",
        "toolkit_version",
    }
)


class ResultsFolder:
    """The files of one evaluation run under ``path``."""

    ROLLOUTS = "rollouts.jsonl"
    RUN = "run.json"
    SUMMARY = "summary.json"
    PLOT = "plot.png"
    TASKS = "tasks.json"
    LOCK = ".lock"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock: IO[str] | None = None
        self._writing = threading.Lock()

    @property
    def rollouts_file(self) -> Path:
        return self.path / self.ROLLOUTS

    def has_rollouts(self) -> bool:
        return self.rollouts_file.is_file() and self.rollouts_file.stat().st_size > 0

    def all_rows(self) -> list[dict[str, Any]]:
        """Every whole row written, in order, rollouts played again included (a last line cut
        short by a kill is left out)."""
        if not self.rollouts_file.is_file():
            return []
        rows = []
        for line in self.rollouts_file.read_text(encoding="utf-8").splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return rows

    def rows(self) -> list[dict[str, Any]]:
        """The last row of each (split, task, sample), in the order they were first written."""
        latest: dict[tuple[str, str, int], dict[str, Any]] = {}
        for row in self.all_rows():
            latest[_pair(row)] = row
        return list(latest.values())

    def done(self, *, keep_errors: bool = False) -> set[tuple[str, str, int]]:
        """The (split, task key, sample) of every rollout written, those that ended in an error
        left out unless ``keep_errors``."""
        return {_pair(r) for r in self.rows() if keep_errors or r.get("finish") != "error"}

    def start(self, settings: dict[str, Any], *, resume: bool, tasks: Iterable[Task] = ()) -> None:
        """Lock the folder, then create it for a new run, or check that ``settings`` and
        ``tasks`` match the run resumed.

        Raises:
            ConfigurationError: Another process writes to the folder; it holds rollouts and
                ``resume`` is not given; or the run resumed had other settings or tasks.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        self.lock()
        try:
            digests = self._check(settings, resume, list(tasks))
        except BaseException:
            self.unlock()
            raise
        self._drop_cut_line()
        self.write_json(self.RUN, settings)
        self.write_json(self.TASKS, digests)

    def _check(self, settings: dict[str, Any], resume: bool, tasks: list[Task]) -> dict[str, str]:
        run_file = self.path / self.RUN
        if resume and run_file.is_file():
            self._check_settings(json.loads(run_file.read_text(encoding="utf-8")), settings)
        elif self.has_rollouts() and not resume:
            raise ConfigurationError(
                f"{self.path} already holds rollouts.",
                hint="Pass --resume to play only the missing ones, or choose another folder.",
            )
        return self._check_tasks(self._task_digests() if resume else {}, tasks)

    def lock(self) -> None:
        """Take the folder's lock, or refuse: one writer per folder."""
        if self._lock is not None:
            return
        handle = (self.path / self.LOCK).open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise ConfigurationError(
                f"{self.path} is being written by another run ({holder}).",
                hint="Wait for it to end, or write to another folder with -o.",
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"openenv eval, pid {os.getpid()}\n")
        handle.flush()
        self._lock = handle

    def unlock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    def append(self, row: dict[str, Any]) -> None:
        """Write one rollout and flush it to disk (from any thread: one at a time)."""
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with self._writing, self.rollouts_file.open("a", encoding="utf-8") as file:
            file.write(line)
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

    def _check_settings(self, recorded: dict[str, Any], settings: dict[str, Any]) -> None:
        changed = sorted(
            k
            for k in settings
            if k not in RESUMABLE_CHANGES and k != "environment" and recorded.get(k) != settings[k]
        )
        server, was = settings.get("environment") or {}, recorded.get("environment") or {}
        if any(
            server.get(k) != was.get(k) for k in ("name", "version", "space", "manifest_digest")
        ):
            changed.append(f"environment: {was.get('name')} {was.get('version') or ''}".strip())
        if changed:
            raise ConfigurationError(
                f"{self.path} holds a run with other settings ({', '.join(changed)}).",
                hint="Resume with the same settings, or write to another folder.",
            )

    def _task_digests(self) -> dict[str, str]:
        digests: dict[str, str] = {}
        tasks_file = self.path / self.TASKS
        if tasks_file.is_file():
            digests.update(json.loads(tasks_file.read_text(encoding="utf-8")))
        for row in self.rows():
            if row.get("task_digest"):
                digests.setdefault(f"{row['split']}/{row['task_key']}", row["task_digest"])
        return digests

    def _check_tasks(self, recorded: dict[str, str], tasks: list[Task]) -> dict[str, str]:
        digests = dict(recorded)
        for task in tasks:
            name = f"{task.split}/{task.key}"
            if recorded.get(name, task.digest) != task.digest:
                raise ConfigurationError(
                    f"The task {name} changed since {self.path} was written (its content is not "
                    "the one its rollouts played).",
                    hint="Evaluate the changed taskset into another folder.",
                )
            digests[name] = task.digest
        return digests

    def _drop_cut_line(self) -> None:
        """Remove a last line left without its newline by a kill, so appends start clean."""
        if not self.has_rollouts():
            return
        data = self.rollouts_file.read_bytes()
        if not data.endswith(b"\n"):
            self.rollouts_file.write_bytes(data[: data.rfind(b"\n") + 1])


def _pair(row: dict[str, Any]) -> tuple[str, str, int]:
    return (row["split"], row["task_key"], int(row["sample"]))
