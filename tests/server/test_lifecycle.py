"""Closing sessions while calls wait or run, cancelled creators, busy sessions, hung closes."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from polling import eventually
from sample_envs import Echoed, Message, Typed

from openenv_hub import Environment, State
from openenv_hub.errors import SessionClosedError
from openenv_hub.server.sessions import SessionPool


class Recorded(Typed):
    """Counts live instances and records what happened to them."""

    events: list[str] = []
    live = 0

    def __init__(self) -> None:
        super().__init__()
        type(self).live += 1

    def close(self) -> None:
        type(self).live -= 1
        self.events.append("close")


class SlowToBuild(Recorded):
    def __init__(self) -> None:
        time.sleep(0.3)
        super().__init__()


class AsyncSteps(Environment[Message, Echoed, State]):
    """An async step that records when it runs, and a close() that records when it runs."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.stepping = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Echoed:
        return Echoed()

    def step(self, action: Message, timeout_s: float | None = None, **kw: Any) -> Echoed:
        raise NotImplementedError

    async def step_async(
        self, action: Message, timeout_s: float | None = None, **kw: Any
    ) -> Echoed:
        self.stepping = True
        try:
            await asyncio.sleep(action.delay_s)
        finally:
            self.stepping = False
        self.log.append("step done")
        return Echoed(echoed_message=action.message)

    @property
    def state(self) -> State:
        return State()

    def close(self) -> None:
        self.log.append("close while stepping" if self.stepping else "close")


class HangsOnClose(Typed):
    release = threading.Event()

    def close(self) -> None:
        self.release.wait(30)


def pool_for(factory: Any, **options: Any) -> SessionPool:
    return SessionPool(factory, action_cls=Message, **options)


@pytest.fixture(autouse=True)
def fresh_records() -> None:
    Recorded.events, Recorded.live = [], 0


async def test_a_call_waiting_for_a_closed_session_gets_a_typed_error() -> None:
    pool = pool_for(Recorded)
    session = await pool.open()
    await pool.reset(session, {})
    running = asyncio.ensure_future(pool.step(session, Message(message="a", delay_s=0.3)))
    waiting = asyncio.ensure_future(pool.step(session, Message(message="b")))
    await eventually(lambda: session.busy == 2)
    await pool.close(session)
    with pytest.raises(SessionClosedError, match="is closed"):
        await waiting
    assert (await running)["observation"]["echoed_message"] == "a"  # the running call finished
    await eventually(lambda: Recorded.events == ["close"])  # then, and only then, close()
    await eventually(lambda: pool.active_sessions == 0)
    await pool.aclose()


async def test_an_async_step_is_not_closed_under() -> None:
    pool = pool_for(AsyncSteps)
    session = await pool.open()
    await pool.reset(session, {})
    env = session.env
    assert isinstance(env, AsyncSteps)
    stepping = asyncio.ensure_future(pool.step(session, Message(message="a", delay_s=0.2)))
    await eventually(lambda: env.stepping)
    await pool.close(session)
    await stepping
    assert env.log == ["step done", "close"]
    await pool.aclose()


async def test_an_async_step_that_never_ends_is_cancelled_before_close() -> None:
    pool = pool_for(AsyncSteps)
    pool.close_timeout_s = 0.2
    session = await pool.open()
    await pool.reset(session, {})
    env = session.env
    assert isinstance(env, AsyncSteps)
    stepping = asyncio.ensure_future(pool.step(session, Message(message="a", delay_s=60)))
    await eventually(lambda: env.stepping)
    await pool.close(session)
    with pytest.raises(asyncio.CancelledError):
        await stepping
    assert env.log == ["close"]
    await pool.aclose()


async def test_an_environment_built_after_its_creator_was_cancelled_is_closed() -> None:
    pool = pool_for(SlowToBuild)
    opening = asyncio.ensure_future(pool.open())
    await eventually(lambda: pool.active_sessions == 1)
    opening.cancel()
    with pytest.raises(asyncio.CancelledError):
        await opening
    assert pool.active_sessions == 1  # the factory still runs: its slot stays taken
    # Closed on the session's thread; the slot is freed on the loop when that call returns.
    await eventually(
        lambda: Recorded.events == ["close"] and pool.active_sessions == 0, timeout_s=5
    )
    assert Recorded.live == 0
    await pool.aclose()


async def test_the_reaper_skips_a_session_that_became_busy_after_it_was_chosen() -> None:
    pool = pool_for(Recorded, idle_timeout_s=60)
    first, second = await pool.open(), await pool.open()
    await pool.reset(second, {})
    first.last_active = second.last_active = time.monotonic() - 120
    calls: list[asyncio.Future[Any]] = []

    async def start_a_call_on_the_second(reason: str) -> None:
        calls.append(asyncio.ensure_future(pool.step(second, Message(message="x", delay_s=0.2))))
        await eventually(lambda: second.busy == 1)

    first.on_close.append(start_a_call_on_the_second)
    assert await pool.watchdog.reap_idle() == 1
    assert first.closed and not second.closed
    await calls[0]
    await pool.aclose()


async def test_shutdown_is_bounded_by_a_hung_close() -> None:
    pool = pool_for(HangsOnClose)
    pool.close_timeout_s = 0.5
    for _ in range(3):
        await pool.open()
    started = time.monotonic()
    await pool.aclose()
    elapsed = time.monotonic() - started
    HangsOnClose.release.set()
    assert elapsed < 2.0, f"aclose took {elapsed:.1f} s for three hung close() calls"
