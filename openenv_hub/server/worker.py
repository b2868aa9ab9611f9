"""The thread a session's synchronous environment methods run on."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Worker"]


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
                loop.call_soon_threadsafe(_settle, future, None, exc)
            else:
                loop.call_soon_threadsafe(_settle, future, result, None)

    def run(self, fn: Callable[[], Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put((loop, future, fn))
        return future

    def shutdown(self) -> None:
        """Let the thread exit once the calls already queued have run."""
        self._queue.put(None)


def _settle(future: asyncio.Future[Any], result: Any, exc: BaseException | None) -> None:
    if future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)
