"""The Sessions tab's event stream: what a viewer is sent as a session steps (in order, the
latest steps only when the session outpaces it, a step serialized once), its bounds (messages
a second, viewers, nothing queued for a slow viewer), and the rules of the route (refused where
watching is off, and to pages of other sites)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from ui_envs import (
    AllFieldsAction,
    AllFieldsEnvironment,
    TypedEchoAction,
    TypedEchoEnvironment,
    TypedEchoObservation,
)

from openenv_hub import create_app
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.server.watch import WATCH_SETTING, SessionWatch
from openenv_hub.ui.watch_stream import (
    MAX_VIEWERS,
    PUSH_INTERVAL_S,
    SHOWN_STEPS,
    watch_events,
)


def parse(message: str) -> tuple[str, dict[str, Any]]:
    kind, data = message.split("\n")[:2]
    return kind.removeprefix("event: "), json.loads(data.removeprefix("data: "))


@contextlib.asynccontextmanager
async def watched_pool(env: Any = TypedEchoEnvironment, action: Any = TypedEchoAction) -> Any:
    pool = SessionPool(env, action_cls=action)
    watch = SessionWatch()
    pool.observers.append(watch)
    session = await pool.open()
    try:
        yield pool, watch, session
    finally:
        await pool.aclose()


async def next_watch(events: AsyncIterator[str]) -> dict[str, Any]:
    while True:
        kind, data = parse(await asyncio.wait_for(anext(events), 5))
        if kind == "watch":
            return data


async def step(pool: SessionPool, session: Session, message: str) -> None:
    await pool.step(session, TypedEchoAction(message=message))


async def test_a_viewer_gets_the_table_then_every_step_in_order_and_the_end() -> None:
    async with watched_pool() as (pool, watch, session):
        await pool.reset(session, {})
        events = watch_events(pool, watch, session.id)
        kind, table = parse(await anext(events))
        assert kind == "sessions"
        assert table["ids"] == [session.id] and table["rows"][0][1] == "WebSocket client"
        first = await next_watch(events)
        assert first["replace"] and "live · episode 1 · 0 steps" in first["text"]
        seen = [row[0] for row in first["rows"]]
        for n in range(1, 6):
            await step(pool, session, f"m{n}")
            later = await next_watch(events)
            assert not later["replace"]
            seen += [row[0] for row in later["rows"]]
            assert json.loads(later["rows"][-1][3])["message"] == f"m{n}"
        assert seen == [1, 2, 3, 4, 5, 6]  # the reset, then each step once, in order
        await pool.close(session)
        ended = await next_watch(events)
        assert "ended · episode 1 · 5 steps" in ended["text"] and ended["rows"] == []
        await events.aclose()
        assert not watch.sessions[session.id].viewers  # a viewer that goes is forgotten


async def test_a_fast_session_is_sent_its_latest_steps_once_a_push_interval_at_most() -> None:
    async with watched_pool() as (pool, watch, session):
        await pool.reset(session, {})
        events = watch_events(pool, watch, session.id)
        stop = asyncio.Event()

        async def stepping() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                await step(pool, session, f"m{n}")
                await asyncio.sleep(0)

        task = asyncio.create_task(stepping())
        messages, start = [], time.monotonic()
        try:
            while time.monotonic() - start < 2.0:
                messages.append(await next_watch(events))
        finally:
            stop.set()
            await task
            await events.aclose()
        elapsed = time.monotonic() - start
        assert len(messages) <= elapsed / PUSH_INTERVAL_S + 2, len(messages)
        indices = [row[0] for message in messages for row in message["rows"]]
        assert indices == sorted(set(indices))  # in order, none twice
        assert all(len(message["rows"]) <= SHOWN_STEPS for message in messages)
        assert sum(message["replace"] for message in messages[1:]) >= 1  # steps were left out
        assert watch.sessions[session.id].steps > len(indices)


async def test_a_viewer_that_does_not_read_holds_nothing_and_then_gets_the_latest() -> None:
    """Nothing is queued for a viewer: one that stops reading while a thousand steps happen is
    sent the latest steps when it reads again, as one message."""
    async with watched_pool() as (pool, watch, session):
        await pool.reset(session, {})
        events = watch_events(pool, watch, session.id)
        await next_watch(events)
        for n in range(1000):
            await step(pool, session, f"m{n}")
        message = await next_watch(events)
        assert message["replace"] and len(message["rows"]) == SHOWN_STEPS
        assert json.loads(message["rows"][-1][3])["message"] == "m999"
        assert "1000 steps" in message["text"]
        await events.aclose()


async def test_each_step_is_serialized_once_whoever_watches() -> None:
    async with watched_pool() as (pool, watch, session):
        await pool.reset(session, {})
        await step(pool, session, "once")
        viewers = [watch_events(pool, watch, session.id) for _ in range(3)]
        sent = [await next_watch(events) for events in viewers]
        assert sent[0]["rows"] == sent[1]["rows"] == sent[2]["rows"]
        rows = [entry.row for entry in watch.sessions[session.id].recent]
        assert all(isinstance(row, str) for row in rows)  # kept on the step for the next viewer
        for events in viewers:
            await events.aclose()


async def test_the_latest_observation_is_sent_as_json_and_its_images_as_png() -> None:
    async with watched_pool(AllFieldsEnvironment, AllFieldsAction) as (pool, watch, session):
        await pool.reset(session, {})
        await pool.step(session, AllFieldsAction(text="look", count=2))
        events = watch_events(pool, watch, session.id)
        message = await next_watch(events)
        await events.aclose()
        observation = json.loads(message["observation"])
        assert observation["summary"] == "fast/red"
        assert observation["frame"].startswith("<image 12x8 RGB")
        paths = [path for path, _ in message["images"]]
        assert paths == ["frame", "thumbnail"]
        assert all(uri.startswith("data:image/png;base64,") for _, uri in message["images"])


@pytest.fixture
def echo_app(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    return create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)


def test_the_stream_is_refused_where_watching_is_off_saying_how_to_turn_it_on(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.setenv("SPACE_ID", "someone/echo")
    served = serve(
        create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True)
    )
    reply = httpx.get(served.web_url + "watch", timeout=10)
    assert reply.status_code == 403
    assert f"turn it on by setting {WATCH_SETTING}=1" in reply.json()["detail"]


def test_pages_of_other_sites_cannot_read_the_stream(serve: Any, echo_app: Any) -> None:
    served = serve(echo_app)
    reply = httpx.get(
        served.web_url + "watch", headers={"Origin": "http://elsewhere.example"}, timeout=10
    )
    assert reply.status_code == 403 and reply.json()["code"] == "ORIGIN_NOT_ALLOWED"
    with httpx.stream("GET", served.web_url + "watch", timeout=10) as own:  # no Origin: served
        assert own.status_code == 200
        assert own.headers["content-type"].startswith("text/event-stream")
        assert next(own.iter_lines()) == "event: sessions"


def test_the_server_sends_at_most_a_bounded_number_of_streams(serve: Any, echo_app: Any) -> None:
    served = serve(echo_app)
    url = served.web_url + "watch"
    limits = httpx.Limits(max_connections=MAX_VIEWERS + 2)
    with httpx.Client(timeout=10, limits=limits) as client, contextlib.ExitStack() as streams:
        for _ in range(MAX_VIEWERS):
            opened = streams.enter_context(client.stream("GET", url))
            assert opened.status_code == 200
        refused = client.get(url)
        assert refused.status_code == 503 and refused.json()["code"] == "TOO_MANY_VIEWERS"
        assert "close a Sessions tab" in refused.json()["detail"]
    deadline = time.monotonic() + 10  # closed streams are counted out (when the server writes)
    while client_status(url) != 200:
        assert time.monotonic() < deadline, "closed streams still counted"
        time.sleep(0.2)


def client_status(url: str) -> int:
    with httpx.stream("GET", url, timeout=10) as reply:
        return reply.status_code
