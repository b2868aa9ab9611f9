"""A call that is cancelled, interrupted or made concurrently never reads another call's reply."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from polling import eventually
from sample_envs import Echoed, Message, Typed

from openenv_hub import EnvClient, State, create_app
from openenv_hub.errors import SessionLostError


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


@pytest.fixture
def server(serve: Any) -> Any:
    return serve(create_app(Typed, Message, Echoed))


async def test_a_step_cancelled_by_wait_for_never_answers_the_next_call(server: Any) -> None:
    async with TypedEnv(base_url=server.url) as env:
        await env.reset()
        with pytest.raises((TimeoutError, asyncio.TimeoutError)):
            await asyncio.wait_for(env.step(Message(message="slow", delay_s=0.5)), 0.1)
        # The cancelled call's connection was dropped with it, and the episode with it.
        with pytest.raises(SessionLostError):
            await env.step(Message(message="second"))
        await env.reset()
        server.wait_for(lambda: server.pool.active_sessions == 1)  # the slow step has ended
        second = await env.step(Message(message="second"))
        assert second.observation.echoed_message == "second"


async def test_a_task_cancelled_mid_call_never_answers_the_next_call(server: Any) -> None:
    async with TypedEnv(base_url=server.url) as env:
        await env.reset()
        task = asyncio.ensure_future(env.step(Message(message="slow", delay_s=0.5)))
        await eventually(lambda: any(s.thread_call_since for s in server.pool.sessions()))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        result = await env.reset()
        assert result.observation.echoed_message == "ready"


async def test_concurrent_calls_on_one_client_each_get_their_own_reply(server: Any) -> None:
    async with TypedEnv(base_url=server.url) as env:
        await env.reset()
        messages = [f"m{i}" for i in range(8)]
        results = await asyncio.gather(
            *(env.step(Message(message=m, delay_s=0.02 * (i % 3))) for i, m in enumerate(messages))
        )
        assert [r.observation.echoed_message for r in results] == messages
        assert (await env.state()).step_count == len(messages)


def test_threads_sharing_a_sync_client_each_get_their_own_reply(server: Any) -> None:
    with TypedEnv(base_url=server.url).sync() as env:
        env.reset()
        messages = [f"t{i}" for i in range(16)]
        with ThreadPoolExecutor(max_workers=4) as executor:
            results = list(
                executor.map(lambda m: env.step(Message(message=m, delay_s=0.01)), messages)
            )
        assert [r.observation.echoed_message for r in results] == messages


@pytest.fixture
def interrupt_after() -> Iterator[Any]:
    """``interrupt_after(s)`` raises KeyboardInterrupt in the main thread after ``s`` seconds,
    as Ctrl-C would."""
    assert threading.current_thread() is threading.main_thread()

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    yield lambda seconds: signal.setitimer(signal.ITIMER_REAL, seconds)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_an_interrupted_sync_call_never_answers_the_next_call(
    server: Any, interrupt_after: Any
) -> None:
    with TypedEnv(base_url=server.url).sync() as env:
        env.reset()
        interrupt_after(0.1)
        with pytest.raises(KeyboardInterrupt):
            env.step(Message(message="slow", delay_s=0.5))
        with pytest.raises(SessionLostError):
            env.step(Message(message="second"))
        env.reset()
        server.wait_for(lambda: server.pool.active_sessions == 1)  # the slow step has ended
        assert env.step(Message(message="second")).observation.echoed_message == "second"
