"""The session core: capacity, threads, signatures, reaping, vanished clients."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import pytest
from polling import eventually
from sample_envs import AsyncTyped, Echoed, Exclusive, Message, Narrow, Typed

from openenv_hub import GenericEnvClient, create_app
from openenv_hub.errors import (
    ConcurrencyConfigurationError,
    ConfigurationError,
    SessionCapacityError,
)
from openenv_hub.server.sessions import DEFAULT_MAX_SESSIONS, SessionPool


def pool_for(factory: Any = Typed, **options: Any) -> SessionPool:
    return SessionPool(factory, action_cls=Message, **options)


async def test_sixty_four_concurrent_sessions_by_default(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    assert server.pool.max_concurrent_envs == DEFAULT_MAX_SESSIONS == 64
    clients = [GenericEnvClient(server.url) for _ in range(64)]

    async def episode(i: int, env: GenericEnvClient) -> str:
        await env.reset(episode_id=f"ep-{i}")
        for n in range(3):
            await env.step({"message": f"{i}-{n}"})
        state = await env.state()
        assert state == {"episode_id": f"ep-{i}", "step_count": 3}
        return (await env.step({"message": f"last-{i}"})).observation["echoed_message"]

    results = await asyncio.gather(*(episode(i, env) for i, env in enumerate(clients)))
    assert results == [f"last-{i}" for i in range(64)]
    assert server.pool.active_sessions == 64
    with pytest.raises(SessionCapacityError):
        await GenericEnvClient(server.url).reset()
    await asyncio.gather(*(env.close() for env in clients))
    server.wait_for(lambda: server.pool.active_sessions == 0)


async def test_sessions_are_isolated_and_sync_methods_keep_their_thread(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    async with GenericEnvClient(server.url) as a, GenericEnvClient(server.url) as b:
        await a.reset(episode_id="a")
        await b.reset(episode_id="b")
        threads_a = {(await a.step({"message": "x"})).observation["thread"] for _ in range(5)}
        threads_b = {(await b.step({"message": "y"})).observation["thread"] for _ in range(5)}
        assert len(threads_a) == 1 and len(threads_b) == 1 and threads_a != threads_b
        assert next(iter(threads_a)).startswith("openenv-session")
        assert (await a.state())["step_count"] == 5 and (await b.state())["episode_id"] == "b"


async def test_async_methods_run_on_the_event_loop(serve: Any) -> None:
    server = serve(create_app(AsyncTyped, Message, Echoed))
    async with GenericEnvClient(server.url) as env:
        assert (await env.reset()).observation["echoed_message"] == "async ready"
        thread = (await env.step({"message": "m"})).observation["thread"]
        assert thread == server.thread.name


async def test_only_accepted_kwargs_are_passed() -> None:
    pool = pool_for(Narrow)
    session = await pool.open()
    reply = await pool.reset(session, {"seed": 1, "episode_id": "x", "custom": True})
    assert reply["observation"]["echoed_message"] == "narrow"
    step = await pool.step(session, Message(message="hi"), {"timeout_s": 3.0, "request_id": "r"})
    assert step["observation"]["echoed_message"] == "HI"
    wide = pool_for(Typed)
    session = await wide.open()
    await wide.reset(session, {"seed": 1, "custom": True})
    assert session.env is not None and session.env.reset_kwargs == {
        "seed": 1,
        "episode_id": None,
        "custom": True,
    }
    await pool.aclose()
    await wide.aclose()


def test_capacity_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_CONCURRENT_ENVS", "5")
    assert pool_for().max_concurrent_envs == 5
    assert pool_for(max_concurrent_envs=9).max_concurrent_envs == 9
    assert pool_for(Exclusive).max_concurrent_envs == 1
    with pytest.raises(ConcurrencyConfigurationError, match="SUPPORTS_CONCURRENT_SESSIONS"):
        pool_for(Exclusive, max_concurrent_envs=2)
    monkeypatch.setenv("MAX_CONCURRENT_ENVS", "lots")
    with pytest.raises(ConfigurationError, match="MAX_CONCURRENT_ENVS must be a whole number"):
        pool_for()
    with pytest.raises(ConfigurationError, match="idle_timeout_s"):
        pool_for(max_concurrent_envs=1, idle_timeout_s=0)


async def test_idle_sessions_are_reaped_by_default() -> None:
    assert pool_for().idle_timeout_s == 300.0
    pool = pool_for(idle_timeout_s=0.2)
    closed: list[str] = []
    session = await pool.open()

    async def on_close(reason: str) -> None:
        closed.append(reason)

    session.on_close.append(on_close)
    await eventually(lambda: pool.active_sessions == 0, timeout_s=5)
    assert closed == ["session idle for over 0.2 s"]
    assert session.env is None and session.closed
    await pool.aclose()


async def test_busy_sessions_are_not_reaped() -> None:
    pool = pool_for(idle_timeout_s=0.1)
    session = await pool.open()
    await pool.reset(session, {})
    await pool.step(session, Message(message="slow", delay_s=0.5))
    assert pool.active_sessions == 1
    await pool.aclose()


async def test_no_threads_left_behind() -> None:
    before = {t.ident for t in threading.enumerate()}
    pool = pool_for()
    sessions = [await pool.open() for _ in range(10)]
    for session in sessions:
        await pool.reset(session, {})
    for session in sessions:
        await pool.close(session)
    await pool.aclose()
    await eventually(lambda: {t.ident for t in threading.enumerate()} <= before, timeout_s=5)


def _half_open_client(url: str) -> socket.socket:
    """Open a WebSocket by hand, start a session, then go silent (never answer pings)."""
    import base64
    import os

    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    assert b"101" in sock.recv(4096).split(b"\r\n")[0]
    payload = json.dumps({"type": "reset"}).encode()
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    sock.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + masked)
    return sock


def test_a_client_that_vanishes_frees_its_session(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed), ws_ping_interval=0.3, ws_ping_timeout=0.3)
    sock = _half_open_client(server.url)
    try:
        server.wait_for(lambda: server.pool.active_sessions == 1)
        server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)
    finally:
        sock.close()


def test_a_client_that_vanishes_is_reaped_when_idle(serve: Any) -> None:
    server = serve(
        create_app(Typed, Message, Echoed, session_idle_timeout_s=0.3), ws_ping_interval=None
    )
    sock = _half_open_client(server.url)
    try:
        server.wait_for(lambda: server.pool.active_sessions == 1)
        server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)
    finally:
        sock.close()
