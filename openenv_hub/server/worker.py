"""The thread a session's synchronous environment methods run on.

Layer: server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from openenv_hub.server.doorbell import Doorbell
from openenv_hub.server.inbox import Inbox

__all__ = ["OnReturn", "SlowCallReport", "Worker", "within"]

logger = logging.getLogger("openenv_hub.server")

#: Told, on the worker's thread, of a call that ran ``seconds`` while ``waiting`` calls queued
#: behind it.
SlowCallReport = Callable[[float, int], None]

#: Told on the loop that a call has returned: its result, or the exception it raised.
OnReturn = Callable[[Any, "BaseException | None"], None]


class Worker:
    """A thread that runs submitted calls one at a time; results come back as asyncio futures.

    Leaner than ``loop.run_in_executor`` with a one-thread pool: one hand-off in (the calls of
    one turn of the event loop queued together, see :meth:`call`; a sleeping thread woken
    through a pipe, see :class:`~openenv_hub.server.inbox.Inbox`), at most one wake-up out (the
    outcomes that return while the loop is busy settled together, see :class:`_Outcomes`),
    which also tells ``on_return`` that the thread is done with the call, even when nobody
    awaits the future any more (so a caller may be cancelled without a ``shield`` and its extra
    turn of the event loop). :meth:`replace_thread` swaps a stuck thread for a new one, so that
    the sessions pinned to the worker go on.

    Args:
        name: The thread's name.
        slow_after_s: Calls that run longer than this, with others queued behind them, are
            passed to ``on_slow``.
        on_slow: Told of such calls (on the worker's thread).
    """

    def __init__(
        self,
        name: str,
        *,
        slow_after_s: float | None = None,
        on_slow: SlowCallReport | None = None,
    ) -> None:
        self.name = name
        self.slow_after_s = slow_after_s
        self.on_slow = on_slow
        self._inbox = Inbox()
        self._busy: list[float | None] = [None]  # when the thread's current call began
        self._batch: list[tuple[Any, ...]] = []  # calls told of by call(), not yet queued
        self._outcomes = _Outcomes()
        #: Calls handed to the thread so far (each a wake-up of the thread when it is idle).
        self.calls_handed = 0
        self.thread = self._start(self._inbox, self._busy)

    @property
    def busy_since(self) -> float | None:
        """When (``time.monotonic()``) the call running on the thread began; ``None``: idle."""
        return self._busy[0]

    def _start(self, calls: Inbox, busy: list[float | None]) -> threading.Thread:
        thread = threading.Thread(
            target=self._serve, args=(calls, busy), name=self.name, daemon=True
        )
        thread.start()
        return thread

    def _serve(self, calls: Inbox, busy: list[float | None]) -> None:
        try:
            self._serve_calls(calls, busy)
        finally:
            calls.close()
            if calls is self._inbox:  # not a thread replace_thread() left behind
                self._outcomes.close()

    def _serve_calls(self, calls: Inbox, busy: list[float | None]) -> None:
        while (item := calls.get()) is not None:
            loop, future, fn, on_return = item
            started = time.perf_counter()
            busy[0] = time.monotonic()
            try:
                result = fn()
            except BaseException as exc:  # handed to the awaiting coroutine or on_return
                if loop is None:
                    logger.exception("%s: a background call failed", self.name)
                else:
                    self._returned(loop, (future, None, exc, on_return))
            else:
                if loop is not None:
                    self._returned(loop, (future, result, None, on_return))
            busy[0] = None
            if self.slow_after_s is not None and self.on_slow is not None:
                elapsed = time.perf_counter() - started
                if elapsed > self.slow_after_s and (waiting := len(calls)):
                    self.on_slow(elapsed, waiting)

    def _returned(self, loop: asyncio.AbstractEventLoop, outcome: _Outcome) -> None:
        """Hand a call's outcome to ``loop`` (on the worker's thread)."""
        if self._outcomes.loop is loop:
            self._outcomes.add(outcome)
        else:  # a loop other than the first one to use the worker: woken for each
            _call_soon(loop, _settle, *outcome)

    def run(self, fn: Callable[[], Any], on_return: OnReturn | None = None) -> asyncio.Future[Any]:
        """Run ``fn`` on the thread after the calls queued before it; await its result.

        ``on_return(result, exception)`` is called on the loop when ``fn`` returns or raises,
        before the future is settled, also if the future was cancelled meanwhile.
        """
        loop = asyncio.get_running_loop()
        self._outcomes.bind(loop)
        future = loop.create_future()
        self._put((loop, future, fn, on_return))
        return future

    def call(self, fn: Callable[[], Any], on_return: OnReturn) -> None:
        """Run ``fn`` on the thread after the calls queued before it, and tell ``on_return``
        on the loop: :meth:`run` without a future, for a caller that waits in no coroutine.

        The calls made in one turn of the event loop are queued together at its end, so that a
        thread woken for one finds the others waiting (one wake-up, not one a call)."""
        loop = asyncio.get_running_loop()
        self._outcomes.bind(loop)
        if not self._batch:
            loop.call_soon(self._hand_over)
        self._batch.append((loop, None, fn, on_return))
        self.calls_handed += 1

    def _hand_over(self) -> None:
        """Queue the calls of this turn of the loop (a callback of the loop's). The thread woken
        for them often runs them before the loop goes on (Linux runs it in the loop's place,
        beside it): what returns meanwhile is settled here, without waking the loop."""
        self._outcomes.watch()
        try:
            self._queue_batch()
        finally:
            self._outcomes.settle_watched()

    def _queue_batch(self) -> None:
        batch, self._batch = self._batch, []
        self._inbox.put_all(batch)

    def _put(self, item: tuple[Any, ...]) -> None:
        """Queue ``item`` behind the calls of this turn of the loop not yet queued."""
        self.calls_handed += 1
        if self._batch:
            self._batch.append(item)
        else:
            self._inbox.put(item)

    def post(self, fn: Callable[[], Any]) -> None:
        """Run ``fn`` on the thread after the calls queued before it, without waiting for it
        (exceptions are logged)."""
        self._put((None, None, fn, None))

    def replace_thread(self) -> int:
        """Serve from a new thread, leaving the current one (stuck in a call) behind.

        Calls queued and awaited (or told of, :meth:`call`) move to the new thread, in order;
        calls only posted (the environment ``close()`` of a session abandoned with the stuck
        call) stay behind and run if the stuck call ever returns, after which the old thread
        exits. Returns how many calls moved.
        """
        stuck, self._inbox = self._inbox, Inbox()
        self._busy = [None]
        self.thread = self._start(self._inbox, self._busy)
        left: list[tuple[Any, ...]] = []
        moving: list[tuple[Any, ...] | None] = []
        for item in stuck.take_all():
            if item is None:  # shut down: the new thread ends too, after the calls before
                moving.append(None)
            elif item[0] is None:
                left.append(item)
            else:
                moving.append(item)
        self._inbox.put_all(moving)
        stuck.put_all([*left, None])
        return sum(item is not None for item in moving)

    def shutdown(self, timeout_s: float | None = 0.0) -> bool:
        """Let the thread exit once the calls already queued have run.

        Waits up to ``timeout_s`` for it (``None``: as long as it takes; the default does not
        wait, for callers on an event loop) and returns whether it has exited.
        """
        self._queue_batch()
        self._inbox.put(None)
        if timeout_s is None or timeout_s > 0:
            self.thread.join(timeout_s)
        return not self.thread.is_alive()


_Outcome = tuple["asyncio.Future[Any] | None", Any, "BaseException | None", "OnReturn | None"]


class _Outcomes:
    """The outcomes of a worker's calls, settled on the event loop in the order they returned:
    the loop is woken (a :class:`~openenv_hub.server.doorbell.Doorbell` of the worker's own, or
    ``call_soon_threadsafe`` where the loop has none) only when no wake-up is pending and the
    loop is not handing calls over (it settles what returns meanwhile, :meth:`watch`), and
    settles every outcome that arrived until it runs. A busy loop is then woken once for many
    calls rather than once a call, and no outcome waits for the next.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None  # the first loop to use the worker
        self._lock = threading.Lock()
        self._ready: list[_Outcome] = []
        self._woken = False
        self._watched = False  # the loop settles what returns until settle_watched()
        self._doorbell: Doorbell | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        if self.loop is None:
            self.loop = loop
            self._doorbell = Doorbell.open(loop, self.settle)

    def close(self) -> None:
        """The worker's thread ended: give back the doorbell (any outcome rung before is still
        settled); a thread left behind by ``replace_thread`` wakes the loop the slower way."""
        doorbell, self._doorbell = self._doorbell, None
        if doorbell is not None:
            doorbell.close_soon()

    def add(self, outcome: _Outcome) -> None:
        """On the worker's thread: one more outcome, and a wake-up unless one is pending."""
        with self._lock:
            self._ready.append(outcome)
            wake = not (self._woken or self._watched)
            self._woken = self._woken or wake
        if wake:
            if (doorbell := self._doorbell) is not None:
                doorbell.ring()
            else:
                assert self.loop is not None
                _call_soon(self.loop, self.settle)

    def watch(self) -> None:
        """On the loop: the outcomes that arrive until :meth:`settle_watched` need no wake-up."""
        with self._lock:
            self._watched = True

    def settle_watched(self) -> None:
        """On the loop: settle what arrived since :meth:`watch` (and before, if any)."""
        with self._lock:
            self._watched = False
            arrived = bool(self._ready)
        if arrived:
            self.settle()

    def settle(self) -> None:
        """On the loop: settle every outcome that arrived (a failing ``on_return`` goes to the
        loop's exception handler, as it would from a callback of its own)."""
        with self._lock:
            ready, self._ready, self._woken = self._ready, [], False
        for outcome in ready:
            try:
                _settle(*outcome)
            except Exception as exc:
                assert self.loop is not None
                self.loop.call_exception_handler(
                    {"message": "Exception in a call's on_return callback", "exception": exc}
                )


def _call_soon(loop: asyncio.AbstractEventLoop, *args: Any) -> None:
    # RuntimeError: the loop closed while the call ran, so nobody is waiting any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(*args)


def _settle(
    future: asyncio.Future[Any] | None,
    result: Any,
    exc: BaseException | None,
    on_return: OnReturn | None,
) -> None:
    if on_return is not None:
        on_return(result, exc)
    if future is None or future.cancelled():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)


async def within(timeout_s: float, future: asyncio.Future[Any]) -> Any:
    """Await ``future`` for at most ``timeout_s`` (``TimeoutError`` after that, the future
    cancelled); on Python 3.11 and later without the waiter ``wait_for`` adds."""
    if sys.version_info < (3, 11):
        return await asyncio.wait_for(future, timeout_s)
    async with asyncio.timeout(timeout_s):
        return await future
