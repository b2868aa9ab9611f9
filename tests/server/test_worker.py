"""A session's thread: results come back as futures, and the thread says when it is done with a
call even to a caller that stopped waiting."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from call_tally import CallTally

from openenv_hub.server.doorbell import Doorbell
from openenv_hub.server.inbox import Inbox
from openenv_hub.server.worker import Worker, within


async def test_the_thread_says_it_returned_before_the_result_is_awaited() -> None:
    worker = Worker("test-worker")
    seen: list[tuple[Any, Any]] = []
    try:
        future = worker.run(lambda: 42, lambda result, exc: seen.append((result, exc)))
        assert await future == 42
        assert seen == [(42, None)]
        failing = worker.run(lambda: 1 / 0, lambda result, exc: seen.append((result, exc)))
        with pytest.raises(ZeroDivisionError):
            await failing
        assert isinstance(seen[-1][1], ZeroDivisionError)
    finally:
        worker.shutdown(timeout_s=5)


async def test_a_caller_that_stopped_waiting_still_learns_when_the_thread_is_done() -> None:
    worker = Worker("test-worker")
    release, returned = threading.Event(), asyncio.Event()
    outcome: list[Any] = []

    def noted(result: Any, exc: BaseException | None) -> None:
        outcome.append(result)
        returned.set()

    try:
        future = worker.run(lambda: release.wait(5) and "done", noted)
        waiting = asyncio.ensure_future(future)
        await asyncio.sleep(0.05)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert future.cancelled() and not outcome  # the thread is still in the call
        release.set()
        await asyncio.wait_for(returned.wait(), 5)
        assert outcome == ["done"]
    finally:
        worker.shutdown(timeout_s=5)


async def test_within_bounds_a_wait_and_cancels_what_it_waited_for() -> None:
    future = asyncio.get_running_loop().create_future()
    with pytest.raises((TimeoutError, asyncio.TimeoutError)):
        await within(0.05, future)
    assert future.cancelled()
    done = asyncio.get_running_loop().create_future()
    done.set_result("now")
    assert await within(1, done) == "now"


async def test_calls_of_one_turn_of_the_loop_reach_the_thread_together() -> None:
    """The thread is woken once for the calls one turn of the event loop made, not once a call:
    none starts before the turn ends, even when the turn lets the thread run meanwhile."""
    worker = Worker("test-worker")
    started: list[float] = []
    returned = asyncio.Event()

    def on_return(result: Any, exc: Any) -> None:
        if len(started) == 20:
            returned.set()

    try:
        for _ in range(20):
            worker.call(lambda: started.append(time.perf_counter()), on_return)
            time.sleep(0.001)  # noqa: ASYNC251 - the GIL free: a woken thread would run it now
        turn_ended = time.perf_counter()
        await asyncio.wait_for(returned.wait(), 10)
        assert min(started) > turn_ended
    finally:
        worker.shutdown(timeout_s=5)


async def test_calls_queued_in_a_turn_run_before_a_later_run_and_the_shutdown() -> None:
    worker = Worker("test-worker")
    order: list[str] = []
    try:
        worker.call(lambda: order.append("call"), lambda result, exc: None)
        worker.post(lambda: order.append("post"))
        assert await worker.run(lambda: order.append("run")) is None
        worker.call(lambda: order.append("last call"), lambda result, exc: None)
    finally:
        assert worker.shutdown(timeout_s=5)
    assert order == ["call", "post", "run", "last call"]


async def test_outcomes_that_return_while_the_loop_is_busy_wake_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Calls that return while the event loop is busy are settled together, in order, from one
    wake-up of the loop (one ring of the worker's doorbell, or one ``call_soon_threadsafe``),
    not one a call (or from none, for those that returned while the loop handed them over)."""
    loop = asyncio.get_running_loop()
    worker = Worker("test-worker")
    all_ran, settled = threading.Event(), asyncio.Event()
    seen: list[tuple[Any, Any]] = []
    wakeups = CallTally()

    def noted(result: Any, exc: BaseException | None) -> None:
        seen.append((result, exc))
        if len(seen) == 50:
            settled.set()

    def call(i: int) -> int:
        if i == 49:
            all_ran.set()
        if i == 7:
            raise ValueError(i)
        return i

    monkeypatch.setattr(Doorbell, "ring", wakeups.counting(Doorbell.ring))
    monkeypatch.setattr(loop, "call_soon_threadsafe", wakeups.counting(loop.call_soon_threadsafe))
    try:
        assert await worker.run(lambda: "first") == "first"  # the worker knows its loop
        wakeups.count = 0
        for i in range(50):
            worker.call(lambda i=i: call(i), noted)
        await asyncio.sleep(0)  # the turn ends: the calls go to the thread
        assert all_ran.wait(10)  # the loop blocked meanwhile, as a busy one is
        time.sleep(0.05)  # noqa: ASYNC251 - the last outcome handed over too
        await asyncio.wait_for(settled.wait(), 10)
        assert wakeups.count <= 1
        assert [r for r, _ in seen] == [*range(7), None, *range(8, 50)]
        assert isinstance(seen[7][1], ValueError)
    finally:
        worker.shutdown(timeout_s=5)


async def test_what_returns_while_the_loop_hands_calls_over_is_settled_without_a_wake_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The thread woken for a step often runs it at once, in the loop's place, while the loop is
    still in the write that woke it: the outcome is then settled as the hand-over ends, in the
    same turn of the loop, and the loop is not woken for it."""
    loop = asyncio.get_running_loop()
    worker = Worker("test-worker")
    returned = threading.Event()
    seen: list[Any] = []
    wakeups = CallTally()
    try:
        assert await worker.run(lambda: "first") == "first"  # the worker knows its loop
        put_all = Inbox.put_all

        def run_in_the_loops_place(inbox: Inbox, items: Any) -> None:
            put_all(inbox, items)
            assert returned.wait(10)  # the thread ran the call and handed back its outcome

        monkeypatch.setattr(Inbox, "put_all", run_in_the_loops_place)
        monkeypatch.setattr(Doorbell, "ring", wakeups.counting(Doorbell.ring))
        monkeypatch.setattr(
            loop, "call_soon_threadsafe", wakeups.counting(loop.call_soon_threadsafe)
        )
        monkeypatch.setattr(worker._outcomes, "add", after(worker._outcomes.add, returned.set))
        worker.call(lambda: "stepped", lambda result, exc: seen.append((result, exc)))
        await asyncio.sleep(0)  # the turn ends: the hand-over runs
        assert seen == [("stepped", None)]
        assert wakeups.count == 0
    finally:
        monkeypatch.undo()
        worker.shutdown(timeout_s=5)


def after(fn: Any, then: Any) -> Any:
    def both(*args: Any) -> Any:
        result = fn(*args)
        then()
        return result

    return both
