"""Validation of the running apps, in the background: the URL checks of ``openenv validate``.

:class:`ValidationCache` keeps the latest :class:`Validation` of each Space, with the time it
was made. Pages only read it: :meth:`~ValidationCache.want` queues a Space whose validation is
missing, older than ``max_age_s`` or made at another commit; :meth:`~ValidationCache.refresh`
queues one at once (a user asked), at most once per ``recheck_s`` for each Space, since anyone
may ask. Worker threads run the checks, and a sweeper queues every known Space again once its
validation is ``max_age_s`` old. Nothing here blocks a page.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openenv_hub.validation import CheckResult
from openenv_hub.validation.remote import RemoteTarget
from openenv_hub.validation.runtime import check_target

__all__ = ["Checker", "Validation", "ValidationCache", "check_app"]

Checker = Callable[[str], tuple[list[CheckResult], "Mapping[str, Any] | None"]]


@dataclass(frozen=True)
class Validation:
    """The checks of one app, when they ran, and the schemas it served.

    Attributes:
        repo_id: The Space.
        url: Its app's URL, as checked.
        sha: The Space's commit when it was checked.
        checked_at: When (seconds since the epoch).
        results: One per check, as ``openenv validate URL`` reports them.
        schemas: What ``GET /schema`` answered (``action``, ``observation``, ``state``), if it did.
    """

    repo_id: str
    url: str
    sha: str | None
    checked_at: float
    results: tuple[CheckResult, ...]
    schemas: Mapping[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return all(result.ok for result in self.results)

    @property
    def failures(self) -> list[CheckResult]:
        return [result for result in self.results if not result.ok]


def check_app(
    url: str, *, timeout_s: float = 10.0, total_timeout_s: float | None = None
) -> tuple[list[CheckResult], dict[str, Any] | None]:
    """``openenv validate URL``'s checks, and the app's ``/schema`` when it serves one.

    Each check gets ``timeout_s`` and all of them ``total_timeout_s`` (default six times
    ``timeout_s``), however slowly the app answers; answers are read up to a size limit.
    """
    with RemoteTarget(url, timeout_s=timeout_s, total_timeout_s=total_timeout_s) as target:
        results = check_target(target, level="runtime")
    schema_ok = any(result.name == "schema_endpoint" and result.ok for result in results)
    return results, dict(target.schemas) if schema_ok else None


@dataclass
class _Target:
    url: str
    sha: str | None


class ValidationCache:
    """The latest validation of each Space, kept fresh by background threads.

    Args:
        check: Runs the checks against an app's URL (default :func:`check_app`).
        max_age_s: A validation older than this is run again.
        workers: Validations running at once.
        recheck_s: Least time between two re-checks of one Space that users ask for.
        clock: Seconds since the epoch.
    """

    def __init__(
        self,
        check: Checker | None = None,
        *,
        max_age_s: float = 900.0,
        workers: int = 2,
        recheck_s: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._check: Checker = check or check_app
        self.max_age_s = max_age_s
        self.workers = workers
        self.recheck_s = recheck_s
        self._clock = clock
        self._rechecked: dict[str, float] = {}  # when a user last had each Space re-checked
        self._records: dict[str, Validation] = {}
        self._targets: dict[str, _Target] = {}
        self._pending: set[str] = set()
        self._queue: queue.Queue[str] = queue.Queue()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- reading ----------------------------------------------------------------------------

    def get(self, repo_id: str) -> Validation | None:
        """The latest validation of ``repo_id``, if any."""
        with self._lock:
            return self._records.get(repo_id)

    def is_pending(self, repo_id: str) -> bool:
        """Whether a validation of ``repo_id`` is queued or running."""
        with self._lock:
            return repo_id in self._pending

    # -- asking -----------------------------------------------------------------------------

    def want(self, repo_id: str, url: str, sha: str | None) -> None:
        """Queue ``repo_id`` unless its validation is fresh (same URL and commit, not too old)."""
        with self._lock:
            self._targets[repo_id] = _Target(url, sha)
            record = self._records.get(repo_id)
            if record is not None and not self._stale(record, self._targets[repo_id]):
                return
            self._enqueue(repo_id)

    def refresh(self, repo_id: str, url: str, sha: str | None) -> float:
        """Queue ``repo_id`` now, however fresh its validation is, unless a re-check of it was
        asked for less than ``recheck_s`` ago.

        Returns:
            0 when queued, else the seconds until it may be asked for again.
        """
        with self._lock:
            now = self._clock()
            wait_s = self._rechecked.get(repo_id, -self.recheck_s) + self.recheck_s - now
            if wait_s > 0:
                return wait_s
            self._rechecked[repo_id] = now
            self._targets[repo_id] = _Target(url, sha)
            self._enqueue(repo_id)
            return 0.0

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the workers and the sweeper (idempotent)."""
        if self._threads:
            return
        self._stop.clear()
        for index in range(self.workers):
            self._spawn(self._work, f"catalog-check-{index}")
        self._spawn(self._sweep, "catalog-sweep")

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop the threads; a check that is running finishes first (within ``timeout_s``)."""
        self._stop.set()
        deadline = time.monotonic() + timeout_s
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._threads = []

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until nothing is queued or running; False if ``timeout_s`` passed first."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if not self._pending:
                    return True
            time.sleep(0.05)
        return False

    # -- work -------------------------------------------------------------------------------

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _enqueue(self, repo_id: str) -> None:
        """Queue once (caller holds the lock)."""
        if repo_id not in self._pending:
            self._pending.add(repo_id)
            self._queue.put(repo_id)

    def _stale(self, record: Validation, target: _Target) -> bool:
        too_old = self._clock() - record.checked_at >= self.max_age_s
        return too_old or record.url != target.url or record.sha != target.sha

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                repo_id = self._queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self._run(repo_id)
            finally:
                with self._lock:
                    self._pending.discard(repo_id)

    def _run(self, repo_id: str) -> None:
        with self._lock:
            target = self._targets.get(repo_id)
        if target is None:
            return
        try:
            results, schemas = self._check(target.url)
        except Exception as exc:  # a check that breaks is a failed check, never a dead worker
            results = [CheckResult("validation", False, f"{type(exc).__name__}: {exc}")]
            schemas = None
        record = Validation(repo_id, target.url, target.sha, self._clock(), tuple(results), schemas)
        with self._lock:
            self._records[repo_id] = record

    def _sweep(self) -> None:
        period_s = min(max(self.max_age_s / 4, 0.2), 60.0)
        while not self._stop.wait(period_s):
            with self._lock:
                for repo_id, target in self._targets.items():
                    record = self._records.get(repo_id)
                    if record is None or self._stale(record, target):
                        self._enqueue(repo_id)

    def __enter__(self) -> ValidationCache:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        with contextlib.suppress(Exception):
            self.stop()
