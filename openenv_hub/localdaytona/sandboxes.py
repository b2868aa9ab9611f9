"""The sandboxes of one local Daytona and what happens to them: created, found by id or name,
listed by labels and states, started, stopped, deleted, and stopped by themselves after
``autoStopInterval`` minutes without activity (API calls about them, toolbox commands, preview
requests and WebSocket messages count).

A watcher thread does the auto-stop and notices containers gone from under the service (removed
with ``docker rm``, or killed): their sandboxes move to ``error`` with the reason. ``minute_s``
is how long an auto-stop minute lasts (60 s; tests shorten it).

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from typing import Any

from .containers import SandboxContainers
from .errors import ApiError
from .records import SandboxRecord, SandboxSpec

__all__ = ["Sandboxes"]

_MAX_EXEC_TIMEOUT_S = 3600.0
_DEFAULT_EXEC_TIMEOUT_S = 360.0


class Sandboxes:
    """The sandboxes, their containers, and the watcher that stops idle ones."""

    def __init__(
        self, containers: SandboxContainers, *, minute_s: float = 60.0, poll_s: float = 1.0
    ) -> None:
        self.containers = containers
        self.minute_s = minute_s
        self._records: dict[str, SandboxRecord] = {}
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._watcher = threading.Thread(
            target=self._watch, args=(poll_s,), name="localdaytona-watcher", daemon=True
        )
        self._watcher.start()

    # -- lifecycle ---------------------------------------------------------------------------

    def create(self, body: Any) -> SandboxRecord:
        """Create and start the sandbox the ``CreateSandbox`` body asks for.

        Raises:
            ApiError: 400 (a field, the image), 409 (the name is taken).
        """
        record = SandboxRecord(SandboxSpec.parse(body))
        with self._lock:
            if record.spec.name and self._named(record.spec.name) is not None:
                raise ApiError(409, f"A sandbox named {record.spec.name!r} already exists.")
            self._records[record.id] = record
        try:
            self.containers.create(record)
        except BaseException:
            with self._lock:
                self._records.pop(record.id, None)
            with contextlib.suppress(ApiError):  # the creation's own error is the one to tell
                self.containers.remove(record)
            raise
        self._start(record)
        return record

    def _start(self, record: SandboxRecord) -> None:
        record.moved_to("starting")
        failed = self.containers.start(record)
        if failed:
            record.moved_to("error", failed)
        else:
            record.moved_to("started")
            record.touch()

    def start(self, key: str) -> SandboxRecord:
        record = self.find(key)
        if record.state != "started":
            self._start(record)
        return record

    def stop(self, key: str, *, force: bool = False) -> SandboxRecord:
        record = self.find(key)
        if record.state in ("started", "starting", "error"):
            record.moved_to("stopping")
            self.containers.stop(record, force=force)
            record.moved_to("stopped")
        return record

    def delete(self, key: str) -> SandboxRecord:
        """Remove the sandbox; when its container could not be removed, it is kept, in state
        ``error`` with the reason, and the ApiError is raised."""
        record = self.find(key)
        record.moved_to("destroying")
        try:
            self.containers.remove(record)
        except ApiError as error:
            record.moved_to("error", error.message)
            raise
        with self._lock:
            self._records.pop(record.id, None)
        record.moved_to("destroyed")
        return record

    # -- reading and settings ----------------------------------------------------------------

    def find(self, key: str) -> SandboxRecord:
        """The sandbox whose id (or name) is ``key``.

        Raises:
            ApiError: 404.
        """
        with self._lock:
            record = self._records.get(key) or self._named(key)
        if record is None:
            raise ApiError.not_found(f"Sandbox with ID or name {key}")
        return record

    def _named(self, name: str) -> SandboxRecord | None:
        return next((r for r in self._records.values() if r.spec.name == name), None)

    def listed(
        self, *, labels: Mapping[str, str], states: list[str], ids: list[str]
    ) -> list[SandboxRecord]:
        """The sandboxes with all of ``labels`` (and in ``states``, among ``ids``, when
        given), oldest first."""
        with self._lock:
            records = sorted(self._records.values(), key=lambda r: r.created_at)
        return [
            r
            for r in records
            if all(r.labels.get(k) == v for k, v in labels.items())
            and (not states or r.state in states)
            and (not ids or r.id in ids)
        ]

    def set_labels(self, key: str, labels: Mapping[str, str]) -> SandboxRecord:
        record = self.find(key)
        record.labels = dict(labels)
        record.moved_to(record.state, record.error_reason)
        return record

    def set_auto_stop(self, key: str, minutes: int) -> SandboxRecord:
        if minutes < 0:
            raise ApiError(400, f"The auto-stop interval is minutes, 0 or more, not {minutes}.")
        record = self.find(key)
        record.auto_stop_interval = minutes
        record.touch()
        return record

    def set_public(self, key: str, public: bool) -> SandboxRecord:
        record = self.find(key)
        record.public = public
        return record

    # -- the toolbox -------------------------------------------------------------------------

    def execute(self, key: str, request: Any) -> tuple[int, str]:
        """Run the ``ExecuteRequest`` ``request`` in the started sandbox ``key``.

        Raises:
            ApiError: 400 (the request), 404, 409 (not started), 408 (timed out).
        """
        record = self.find(key)
        if not isinstance(request, Mapping) or not isinstance(request.get("command"), str):
            raise ApiError(400, "The body must be an ExecuteRequest with a command.")
        envs = request.get("envs") or {}
        timeout = request.get("timeout")
        if not isinstance(envs, Mapping) or (timeout is not None and not isinstance(timeout, int)):
            raise ApiError(400, "envs must be an object of strings and timeout whole seconds.")
        if record.state != "started":
            raise ApiError(409, f"Sandbox {record.id} is {record.state}: start it first.")
        record.touch()
        timeout_s = min(float(timeout), _MAX_EXEC_TIMEOUT_S) if timeout else _DEFAULT_EXEC_TIMEOUT_S
        cwd = request.get("cwd") if isinstance(request.get("cwd"), str) else None
        return self.containers.execute(
            record, request["command"], cwd=cwd, envs=dict(envs), timeout_s=timeout_s
        )

    # -- the watcher -------------------------------------------------------------------------

    def _watch(self, poll_s: float) -> None:
        while not self._closed.wait(poll_s):
            with contextlib.suppress(Exception):  # an engine that stops answering, for a while
                self._check()

    def _check(self) -> None:
        with self._lock:
            started = [r for r in self._records.values() if r.state == "started"]
        if not started:
            return
        running = self.containers.running_ids()
        now = time.time()
        for record in started:
            idle_s = now - record.last_activity_at
            if record.container_id not in running:
                if record.state == "started":  # not stopped or deleted meanwhile
                    record.moved_to("error", "its container stopped or was removed")
            elif record.auto_stop_interval and idle_s > record.auto_stop_interval * self.minute_s:
                self.stop(record.id)

    def close(self) -> None:
        """Stop the watcher and remove every sandbox's container."""
        self._closed.set()
        with self._lock:
            records = list(self._records.values())
            self._records.clear()
        for record in records:
            with contextlib.suppress(ApiError):  # this process's reaper removes what is left
                self.containers.remove(record)
        self.containers.close()
