"""Where a pool's sessions run their synchronous environment calls.

By default every session has a thread of its own (:class:`~openenv_hub.server.worker.Worker`),
so libraries with thread affinity work and a slow call never blocks another session; stateless
HTTP calls borrow threads kept spare. ``REQUIRES_SINGLE_THREAD_EXECUTOR`` puts every session on
one shared thread. ``RUNS_ON_EVENT_LOOP`` puts them on no thread at all: calls run inline on the
event loop, which saves the thread hop for environments whose calls are quick, and a guard logs
(once) when one is not.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from openenv_hub.server.worker import Worker

__all__ = ["INLINE_WARN_AFTER_S", "SessionThreads"]

logger = logging.getLogger("openenv_hub.server")

#: An inline call slower than this is reported (once per pool): it held up every session. Well
#: above a garbage collection pause or a busy machine's scheduling delay, so that only a call
#: that is slow in itself is reported.
INLINE_WARN_AFTER_S = 0.02
_MAX_SPARE_WORKERS = 8  # idle threads kept for stateless HTTP requests


class SessionThreads:
    """Hands out, takes back and retires the threads of one pool's sessions."""

    def __init__(self, *, env_name: str, inline: bool, shared: bool) -> None:
        self.env_name = env_name
        self.inline = inline
        self.shared = shared
        self.abandoned = 0
        self.inline_warn_after_s = INLINE_WARN_AFTER_S
        self._warned = False
        self._shared: Worker | None = None
        self._spares: list[Worker] = []

    def assign(self, session_id: str, *, reuse: bool) -> tuple[Worker | None, bool]:
        """A thread for a new session and whether the session owns it (``None``: inline)."""
        if self.inline:
            return None, False
        if self.shared:
            if self._shared is None:
                self._shared = Worker("openenv-env")
            return self._shared, False
        if reuse and self._spares:
            return self._spares.pop(), True
        return Worker(f"openenv-session-{session_id[:8]}"), True

    def give_back(self, worker: Worker, *, reuse: bool) -> None:
        """A session that owned ``worker`` ended: keep the thread as a spare, or end it."""
        if reuse and len(self._spares) < _MAX_SPARE_WORKERS:
            self._spares.append(worker)
        else:
            worker.shutdown()

    def abandon(self, worker: Worker) -> None:
        """Give up on a thread stuck in a call: it is never handed out again, and counted."""
        self.abandoned += 1
        if worker is self._shared:
            self._shared = None  # new sessions get a thread of their own
        worker.shutdown()  # it exits if the call ever returns

    def run_inline(self, fn: Callable[[], Any]) -> Any:
        """Call ``fn`` on the event loop, reporting (once) a call slow enough to hurt."""
        started = time.perf_counter()
        try:
            return fn()
        finally:
            elapsed = time.perf_counter() - started
            if elapsed > self.inline_warn_after_s and not self._warned:
                self._warned = True
                logger.warning(
                    "Environment %r runs on the event loop (RUNS_ON_EVENT_LOOP) but a call took "
                    "%.0f ms, holding up every session meanwhile. Set RUNS_ON_EVENT_LOOP = False "
                    "(or create_app(..., run_on_event_loop=False)) unless its calls are quick.",
                    self.env_name,
                    elapsed * 1000,
                )

    def shutdown(self) -> None:
        """End the shared and the spare threads (the pool's shutdown)."""
        if self._shared is not None:
            self._shared.shutdown()
            self._shared = None
        while self._spares:
            self._spares.pop().shutdown()
