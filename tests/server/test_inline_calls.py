"""Environments whose calls are quick run them on the event loop; the others on their threads."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from polling import eventually
from sample_envs import Echoed, Message, Typed

from openenv_hub import EnvClient, State, create_app
from openenv_hub.errors import ConfigurationError


class TypedEnv(EnvClient[Message, Echoed, State]):
    action_type, observation_type, state_type = Message, Echoed, State


class Quick(Typed):
    RUNS_ON_EVENT_LOOP = True


class SharedAndInline(Typed):
    REQUIRES_SINGLE_THREAD_EXECUTOR = True
    RUNS_ON_EVENT_LOOP = True


async def test_an_inline_environment_runs_on_the_event_loop_thread(serve: Any) -> None:
    server = serve(create_app(Quick, Message, Echoed))
    async with TypedEnv(base_url=server.url) as env:
        await env.reset()
        result = await env.step(Message(message="hi"))
    assert result.observation.thread == server.thread.name  # the server's loop, no hop


async def test_the_option_overrides_the_class(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, run_on_event_loop=True))
    async with TypedEnv(base_url=server.url) as env:
        await env.reset()
        result = await env.step(Message(message="hi"))
    assert result.observation.thread == server.thread.name


def test_inline_and_a_shared_thread_cannot_be_combined() -> None:
    with pytest.raises(ConfigurationError, match="REQUIRES_SINGLE_THREAD_EXECUTOR"):
        create_app(SharedAndInline, Message, Echoed)


async def test_a_slow_inline_step_is_reported_once_with_the_environment_name(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(create_app(Quick, Message, Echoed, env_name="quick_env"))
    with caplog.at_level(logging.WARNING, logger="openenv_hub.server"):
        async with TypedEnv(base_url=server.url) as env:
            await env.reset()
            await env.step(Message(message="fast"))
            for _ in range(3):
                await env.step(Message(message="slow", delay_s=0.05))
    reports = [r for r in caplog.records if "runs on the event loop" in r.getMessage()]
    assert len(reports) == 1
    assert (
        "'quick_env'" in reports[0].getMessage() and "RUNS_ON_EVENT_LOOP" in reports[0].getMessage()
    )


async def test_a_threaded_slow_step_does_not_delay_another_session(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    async with TypedEnv(base_url=server.url) as slow, TypedEnv(base_url=server.url) as fast:
        await slow.reset()
        await fast.reset()
        stepping = asyncio.ensure_future(slow.step(Message(message="slow", delay_s=1.5)))
        await eventually(lambda: any(s.thread_call_since for s in server.pool.sessions()))
        started = time.monotonic()
        result = await fast.step(Message(message="fast"))
        elapsed = time.monotonic() - started
        assert result.observation.echoed_message == "fast" and not stepping.done()
        assert elapsed < 1.0, f"the other session waited {elapsed:.2f} s"
        await stepping
