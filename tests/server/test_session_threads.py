"""Sessions share a bounded set of threads, each session pinned to one for all its calls."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest
from polling import eventually
from sample_envs import Echoed, Message, Typed

from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.settings import default_session_threads


def pool_of(threads: int, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> SessionPool:
    monkeypatch.setenv("OPENENV_SESSION_THREADS", str(threads))
    return SessionPool(Typed, action_cls=Message, env_name="pinned_env", **kwargs)


def _session_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("openenv-session")]


async def opened(pool: SessionPool) -> Any:
    """A new session of ``pool`` with its episode started (a step before reset is refused)."""
    session = await pool.open()
    await pool.reset(session, {})
    return session


async def step_thread(pool: SessionPool, session: Any, **action: Any) -> str:
    payload = await pool.step(session, Message(message="hi", **action))
    return str(payload["observation"]["thread"])


async def test_a_sessions_calls_all_run_on_one_thread_under_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    earlier = set(_session_threads())  # other pools' threads in this process (other tests)
    pool = pool_of(3, monkeypatch)
    try:
        sessions = [await opened(pool) for _ in range(12)]

        async def drive(session: Any) -> set[str]:
            await pool.reset(session, {})
            return {await step_thread(pool, session) for _ in range(10)}

        seen = await asyncio.gather(*(drive(s) for s in sessions))
        for session, threads in zip(sessions, seen, strict=True):
            assert threads == {session.env.created_on}, threads  # built there, stepped there
        assert len(set().union(*seen)) == 3
        assert pool.threads.started == 3
        assert len(set(_session_threads()) - earlier) == 3
    finally:
        await pool.aclose()


async def test_a_new_session_is_pinned_to_the_thread_with_fewest_live_sessions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = pool_of(2, monkeypatch)
    try:
        first, second, third, fourth = [await opened(pool) for _ in range(4)]
        assert first.worker is third.worker and second.worker is fourth.worker
        assert first.worker is not second.worker
        await pool.close(first)
        await pool.close(third)  # the first thread is now free: the next two go there
        fifth, sixth = await opened(pool), await opened(pool)
        assert fifth.worker is sixth.worker is first.worker
        assert pool.threads.load(first.worker) == 2 and pool.threads.load(second.worker) == 2
    finally:
        await pool.aclose()


async def test_a_slow_step_delays_only_the_sessions_pinned_to_its_thread(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pool = pool_of(2, monkeypatch)
    pool.threads.slow_warn_after_s = 0.3
    try:
        slow, other = await opened(pool), await opened(pool)
        beside, elsewhere = await opened(pool), await opened(pool)
        assert beside.worker is slow.worker and elsewhere.worker is other.worker
        with caplog.at_level(logging.WARNING, logger="openenv_hub.server"):
            stepping = asyncio.ensure_future(step_thread(pool, slow, delay_s=1.2))
            await eventually(lambda: slow.thread_call_since is not None)
            started = time.monotonic()
            await step_thread(pool, elsewhere)
            assert time.monotonic() - started < 0.6, "a session on another thread waited"
            await step_thread(pool, beside)
            assert time.monotonic() - started > 0.6, "the session beside it did not wait"
            await stepping
            await step_thread(pool, slow, delay_s=0.5)  # slow again, nobody waiting: no report
        reports = [r.getMessage() for r in caplog.records if "shared by" in r.getMessage()]
        assert len(reports) == 1, reports
        assert "'pinned_env'" in reports[0] and "1 call(s) of other sessions" in reports[0]
    finally:
        await pool.aclose()


async def test_a_stuck_call_has_its_thread_replaced_so_the_sessions_beside_it_go_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = pool_of(1, monkeypatch, step_hard_timeout_s=0.4)
    release = threading.Event()

    class Stuck(Typed):
        def step(self, action: Message, **kwargs: Any) -> Echoed:
            if action.message == "stuck":
                release.wait(30)
            return super().step(action, **kwargs)

    pool._factory = Stuck
    try:
        stuck, beside = await opened(pool), await opened(pool)
        first_thread = stuck.worker.thread
        stepping = asyncio.ensure_future(pool.step(stuck, Message(message="stuck")))
        await eventually(lambda: stuck.thread_call_since is not None)
        queued = asyncio.ensure_future(step_thread(pool, beside))  # behind the stuck call
        await asyncio.wait([queued], timeout=10)  # the watchdog abandons the stuck call at 0.4 s
        assert queued.done() and not queued.cancelled(), "the session beside it was stuck too"
        thread = queued.result()
        assert stuck.closed and pool.abandoned_threads == 1
        assert beside.worker.thread is not first_thread and first_thread.is_alive()
        assert thread == beside.worker.thread.name
        assert await step_thread(pool, beside) == thread  # and stays there
        assert pool.threads.load(beside.worker) == 1 and pool.active_sessions == 1
        newcomer = await opened(pool)
        assert await step_thread(pool, newcomer) == thread
        with pytest.raises(BaseException):  # noqa: B017 - the abandoned caller is cancelled
            await stepping
    finally:
        release.set()
        await asyncio.wait_for(pool.aclose(), 15)
    first_thread.join(5)
    assert not first_thread.is_alive()  # the stuck thread ends once its call returns


def test_the_default_pool_is_sized_to_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENENV_SESSION_THREADS", raising=False)
    pool = SessionPool(Typed, action_cls=Message)
    assert pool.threads.size == default_session_threads()
    assert 8 <= pool.threads.size <= 32


async def test_a_call_waiting_behind_another_is_not_taken_for_a_stuck_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pool = pool_of(1, monkeypatch, step_hard_timeout_s=0.5)
    try:
        first, second = await opened(pool), await opened(pool)
        ahead = asyncio.ensure_future(step_thread(pool, first, delay_s=0.4))
        await eventually(lambda: first.thread_call_since is not None)
        # Pending for about 0.75 s, past the limit, but running for only 0.35 s of it.
        behind = await asyncio.wait_for(step_thread(pool, second, delay_s=0.35), 10)
        assert behind and await ahead
        await asyncio.sleep(0.3)  # a watchdog round or two
        assert pool.abandoned_threads == 0 and not second.closed and not first.closed
    finally:
        await asyncio.wait_for(pool.aclose(), 15)
