"""The watchdog of a session pool: closes idle sessions, and abandons stuck threads.

Layer: server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from openenv_hub.server.session import Session
    from openenv_hub.server.worker import Worker

__all__ = ["Watchdog", "WatchedPool"]

logger = logging.getLogger("openenv_hub.server")


class WatchedPool(Protocol):
    """What the watchdog reads and calls of the pool it watches
    (:class:`~openenv_hub.server.lifecycle.SessionLifecycle`, which owns the watchdog)."""

    @property
    def idle_timeout_s(self) -> float | None: ...

    @property
    def step_hard_timeout_s(self) -> float: ...

    def sessions(self) -> list[Session]: ...

    def occupied(self) -> list[Session]: ...

    async def close(self, session: Session, reason: str = "closed") -> None: ...

    async def abandon(self, session: Session) -> None: ...


class Watchdog:
    """A task that, every quarter of the shortest limit (at most 5 s), closes sessions idle for
    longer than ``idle_timeout_s`` and abandons calls stuck past ``step_hard_timeout_s``."""

    def __init__(self, pool: WatchedPool) -> None:
        self.pool = pool
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching on the running loop, unless already watching there (a pool used
        from a helper loop first, as the web UI does to read metadata, moves to the server's)."""
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._task = loop.create_task(self._watch_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _watch_forever(self) -> None:
        limits = [t for t in (self.pool.idle_timeout_s, self.pool.step_hard_timeout_s) if t]
        interval = min(max(min(limits) / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()
            await self.abandon_stuck()

    async def reap_idle(self) -> int:
        """Close sessions idle for longer than ``idle_timeout_s``; returns how many."""
        timeout_s = self.pool.idle_timeout_s
        if timeout_s is None:
            return 0
        deadline = time.monotonic() - timeout_s
        reaped = 0
        for session in [s for s in self.pool.sessions() if s.last_active < deadline]:
            if session.busy or session.last_active >= deadline:  # became busy meanwhile
                continue
            logger.info("Closing session %s: idle for over %.0f s", session.id, timeout_s)
            await self.pool.close(session, reason=f"session idle for over {timeout_s:g} s")
            reaped += 1
        return reaped

    async def abandon_stuck(self) -> int:
        """Free the slots of calls stuck on their thread past ``step_hard_timeout_s``.

        Sessions share threads, so a call may wait in its thread's queue behind another: only
        the call running on the thread, which has run past the limit itself, is stuck (a
        thread runs its calls in the order they came, so it is the earliest still unreturned).
        """
        deadline = time.monotonic() - self.pool.step_hard_timeout_s
        running: dict[Worker, Session] = {}
        for session in self.pool.occupied():
            since, worker = session.thread_call_since, session.worker
            if since is None or since >= deadline or worker is None:
                continue
            earliest = running.get(worker)
            if earliest is None or since < (earliest.thread_call_since or since):
                running[worker] = session
        stuck = [
            session
            for worker, session in running.items()
            if worker.busy_since is not None and worker.busy_since < deadline
        ]
        for session in stuck:
            await self.pool.abandon(session)
        return len(stuck)
