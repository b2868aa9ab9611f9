"""Where a pool's sessions run their synchronous environment calls.

By default sessions share a fixed set of threads (``OPENENV_SESSION_THREADS``, sized to the
machine; see :mod:`openenv_hub.server.settings`), and each session is pinned to one of them when
it opens: the thread with the fewest live sessions. All of a session's calls run on that thread,
so libraries with thread affinity work; a slow call delays only the sessions pinned beside it
(reported once, with the environment's name), and a call stuck past the hard timeout has its
thread replaced so that those sessions go on. ``REQUIRES_SINGLE_THREAD_EXECUTOR`` puts every
session on one shared thread. ``RUNS_ON_EVENT_LOOP`` puts them on no thread at all: calls run
inline on the event loop, which saves the thread hop for environments whose calls are quick,
and a guard logs (once) when one is not.

Layer: server.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import openenv_hub.server.settings as settings
from openenv_hub.errors import ConfigurationError
from openenv_hub.server.worker import Worker

__all__ = ["INLINE_WARN_AFTER_S", "SLOW_CALL_WARN_S", "SessionThreads"]

logger = logging.getLogger("openenv_hub.server")

#: An inline call slower than this is reported (once per pool): it held up every session. Well
#: above a garbage collection pause or a busy machine's scheduling delay, so that only a call
#: that is slow in itself is reported.
INLINE_WARN_AFTER_S = 0.02
#: A call on a shared thread slower than this, with other sessions' calls waiting behind it, is
#: reported (once per pool).
SLOW_CALL_WARN_S = 1.0


class SessionThreads:
    """Pins sessions to threads, releases them, and replaces threads stuck in a call.

    Args:
        env_name: The environment's name, for the warnings.
        inline: Run calls on the event loop (no threads).
        shared: Run every session's calls on one thread.
        size: Threads at most (default ``$OPENENV_SESSION_THREADS`` or sized to the machine).
    """

    def __init__(
        self, *, env_name: str, inline: bool, shared: bool, size: int | None = None
    ) -> None:
        self.env_name = env_name
        self.inline = inline
        self.shared = shared
        self.size = 1 if shared else settings.session_threads(size)
        self.abandoned = 0
        self.inline_warn_after_s = INLINE_WARN_AFTER_S
        self.slow_warn_after_s = SLOW_CALL_WARN_S
        self._warned = False
        self._slow_warned = False
        self._load: dict[Worker, int] = {}  # each thread, and the live sessions pinned to it

    @classmethod
    def for_environment(
        cls, env_cls: type[Any] | None, name: str, run_on_event_loop: bool | None
    ) -> SessionThreads:
        """Where the sessions of ``env_cls`` (``name`` in messages) run: on the event loop when
        ``run_on_event_loop`` says so (by default its ``RUNS_ON_EVENT_LOOP``), on one shared
        thread for ``REQUIRES_SINGLE_THREAD_EXECUTOR``, else pinned to the bounded set."""
        inline = getattr(env_cls, "RUNS_ON_EVENT_LOOP", False)
        inline = inline if run_on_event_loop is None else run_on_event_loop
        shared = getattr(env_cls, "REQUIRES_SINGLE_THREAD_EXECUTOR", False)
        if inline and shared:
            raise ConfigurationError(
                f"Environment '{name}' sets REQUIRES_SINGLE_THREAD_EXECUTOR, so its calls cannot "
                "run on the event loop: leave run_on_event_loop (and RUNS_ON_EVENT_LOOP) off."
            )
        return cls(env_name=name, inline=bool(inline), shared=shared)

    @property
    def started(self) -> int:
        """Threads started so far (at most :attr:`size`; abandoned ones not counted)."""
        return len(self._load)

    def assign(self, session_id: str, *, reuse: bool = False) -> tuple[Worker | None, bool]:
        """The thread a new session is pinned to and whether the session must give it back
        (``None``: its calls run inline). ``reuse`` is accepted for older callers; every thread
        is shared."""
        if self.inline:
            return None, False
        worker = self._least_loaded()
        self._load[worker] += 1
        return worker, True

    def _least_loaded(self) -> Worker:
        lightest = min(self._load, key=self._load.__getitem__, default=None)
        if lightest is not None and (self._load[lightest] == 0 or len(self._load) >= self.size):
            return lightest
        name = "openenv-env" if self.shared else f"openenv-session-{len(self._load)}"
        worker = Worker(name, slow_after_s=self.slow_warn_after_s, on_slow=self._report_slow)
        self._load[worker] = 0
        return worker

    @property
    def workers(self) -> list[Worker]:
        """The threads started so far (abandoned ones not included)."""
        return list(self._load)

    def load(self, worker: Worker) -> int:
        """Live sessions pinned to ``worker``."""
        return self._load.get(worker, 0)

    def give_back(self, worker: Worker, *, reuse: bool = False) -> None:
        """A session pinned to ``worker`` ended: the thread has room for one more."""
        if worker in self._load:
            self._load[worker] = max(self._load[worker] - 1, 0)
        else:
            worker.shutdown()

    def abandon(self, worker: Worker) -> None:
        """Give up on a thread stuck in a call (counted): a new thread takes its place, and the
        calls queued behind the stuck one move to it. The session whose call is stuck is
        released; the others pinned to the thread stay pinned to its replacement."""
        self.abandoned += 1
        self.give_back(worker)
        moved = worker.replace_thread()
        others = self.load(worker)
        if others:
            logger.warning(
                "Environment %r: a call stuck past the hard timeout was abandoned; the %d other "
                "session(s) pinned to its thread (%d call(s) queued) now run on a new thread.",
                self.env_name,
                others,
                moved,
            )

    def _report_slow(self, seconds: float, waiting: int) -> None:
        """A call on a shared thread was slow while others waited: say so, once per pool."""
        if self._slow_warned:
            return
        self._slow_warned = True
        logger.warning(
            "Environment %r: a call took %.0f ms on a thread shared by several sessions, and %d "
            "call(s) of other sessions waited behind it. Only the sessions pinned to that thread "
            "were delayed; if calls are often this slow, raise OPENENV_SESSION_THREADS (now %d).",
            self.env_name,
            seconds * 1000,
            waiting,
            self.size,
        )

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
        """End every thread once its queued calls have run (the pool's shutdown)."""
        workers, self._load = list(self._load), {}
        for worker in workers:
            worker.shutdown()
