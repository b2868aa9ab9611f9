"""The thread a session's synchronous environment methods run on."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Worker"]

logger = logging.getLogger("openenv_hub.server")


class Worker:
    """A thread that runs submitted calls one at a time; results come back as asyncio futures.

    Leaner than ``loop.run_in_executor`` with a one-thread pool: one queue hand-off in, one
    ``call_soon_threadsafe`` out.
    """

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[tuple[Any, ...] | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while (item := self._queue.get()) is not None:
            loop, future, fn = item
            try:
                result = fn()
            except BaseException as exc:  # handed to the awaiting coroutine
                if future is None:
                    logger.exception("%s: a background call failed", self.thread.name)
                else:
                    _call_soon(loop, _settle, future, None, exc)
            else:
                if future is not None:
                    _call_soon(loop, _settle, future, result, None)

    def run(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        """Run ``fn`` on the thread after the calls queued before it; await its result."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put((loop, future, fn))
        return future

    def post(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the thread after the calls queued before it, without waiting for it
        (exceptions are logged)."""
        self._queue.put((None, None, fn))

    def shutdown(self, timeout_s: float | None = 0.0) -> bool:
        """Let the thread exit once the calls already queued have run.

        Waits up to ``timeout_s`` for it (``None``: as long as it takes; the default does not
        wait, for callers on an event loop) and returns whether it has exited.
        """
        self._queue.put(None)
        if timeout_s is None or timeout_s > 0:
            self.thread.join(timeout_s)
        return not self.thread.is_alive()


def _call_soon(loop: asyncio.AbstractEventLoop, *args: Any) -> None:
    # RuntimeError: the loop closed while the call ran, so nobody is waiting any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*args)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
