"""The Sessions tab's live feed: a Server-Sent Events stream per viewer, pushed as the watched
session steps, so that a watching page neither polls nor costs a gradio event per update.

``GET {UI path}/watch?session=ID`` (``session`` optional) sends events of two kinds:

- ``sessions``: the sessions table (:func:`session_rows`) and the ids a viewer may pick, when
  sessions come or go (looked at every :data:`IDS_CHECK_S`) and every :data:`TABLE_REFRESH_S`;
- ``watch``: the watched session's status, its calls since the last message (the latest
  :data:`SHOWN_STEPS` at most; ``replace`` when some were left out) and its latest observation
  (JSON less its images, and the images as PNG ``data:`` URIs).

A stream waits on its session's news (:meth:`WatchedSession.follow`) and sends at most one
``watch`` message every :data:`PUSH_INTERVAL_S`, whatever the session's pace. A step's row is
serialized once, whoever watches. Nothing is queued for a viewer: one that reads slowly holds its
stream at a ``send``, and gets the latest steps when it reads again. At most :data:`MAX_VIEWERS`
streams are open at once; each ends after :data:`MAX_STREAM_S` (``EventSource`` reconnects).
Where watching is off, the route answers 403 saying how to turn it on.

Layer: ui.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import io
import json
import math
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from openenv_hub.rubrics.episode import BREAKDOWN_KEY
from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.watch import (
    SessionWatch,
    WatchedSession,
    WatchedStep,
    watching_refused_message,
)
from openenv_hub.ui.observation import split_observation

__all__ = [
    "MAX_VIEWERS",
    "PUSH_INTERVAL_S",
    "SHOWN_STEPS",
    "WATCH_ROUTE",
    "session_rows",
    "step_rows",
    "watch_events",
    "watch_route",
]

WATCH_ROUTE = "/watch"  # inside the UI's app: /web/watch
PUSH_INTERVAL_S = 0.5  # a viewer gets at most two step messages a second
SHOWN_STEPS = 20  # the latest watched steps a viewer is sent and shown
TABLE_REFRESH_S = 2.0  # the sessions table is sent again this often when no session came or went
IDS_CHECK_S = 0.5  # how often a stream looks whether sessions came or went
MAX_VIEWERS = 32  # streams open at once, per UI
MAX_STREAM_S = 600.0  # a stream's lifetime; the browser opens it again
MAX_SESSION_ID_CHARS = 200


def session_rows(pool: SessionPool, watch: SessionWatch) -> list[list[Any]]:
    """A row per open session (stateless calls left out), as the sessions table shows it."""
    rows = []
    now = time.monotonic()
    for session in pool.sessions():
        if session.kind == "http-ephemeral":
            continue
        watched = watch.sessions.get(session.id) or WatchedSession(session.id)
        idle = f"{now - session.last_active:.1f} s ago"
        rows.append([session.id, session.kind, watched.episodes, watched.steps,
                     round(watched.return_so_far, 6), idle])  # fmt: skip
    return rows


def step_row(entry: WatchedStep) -> str:
    """``entry`` as the steps table's row, a JSON array (made once, then kept on the entry)."""
    if entry.row is None:
        payload = entry.payload
        breakdown = (payload.get("observation") or {}).get("metadata", {}).get(BREAKDOWN_KEY, {})
        cells = [entry.index, entry.episode, entry.step, _json(entry.action),
                 _json(payload.get("reward")), _json(payload.get("done")), _json(breakdown)]  # fmt: skip
        entry.row = json.dumps(cells)
    return entry.row


def step_rows(watched: WatchedSession) -> list[list[Any]]:
    """A row per step of ``watched`` among the latest :data:`SHOWN_STEPS`, oldest first."""
    return [json.loads(step_row(entry)) for entry in watched.since(0, most=SHOWN_STEPS)]


def watch_route(pool: SessionPool, watch: SessionWatch | None) -> Any:
    """The endpoint of :data:`WATCH_ROUTE` (``watch`` None: watching is off)."""
    open_streams = 0

    async def stream(request: Request) -> Response:
        nonlocal open_streams
        if watch is None:
            return _refusal(403, watching_refused_message(pool.watch_rule()), "WATCHING_OFF")
        chosen = request.query_params.get("session") or None
        if chosen is not None and len(chosen) > MAX_SESSION_ID_CHARS:
            return _refusal(400, f"session: an id is at most {MAX_SESSION_ID_CHARS} characters "
                            "long; pick one from the Sessions tab.", "BAD_SESSION_ID")  # fmt: skip
        if open_streams >= MAX_VIEWERS:
            return _refusal(503, f"This server already sends {MAX_VIEWERS} live watches, its "
                            "bound; close a Sessions tab and try again.", "TOO_MANY_VIEWERS")  # fmt: skip
        open_streams += 1

        async def counted() -> AsyncIterator[str]:
            nonlocal open_streams
            try:
                async for message in watch_events(pool, watch, chosen):
                    yield message
            finally:
                open_streams -= 1

        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
        return StreamingResponse(counted(), media_type="text/event-stream", headers=headers)

    return stream


async def watch_events(
    pool: SessionPool,
    watch: SessionWatch,
    chosen: str | None,
    *,
    lifetime_s: float = MAX_STREAM_S,
) -> AsyncIterator[str]:
    """The Server-Sent Events of one viewer watching ``chosen`` (None: the table only)."""
    feed = _Feed(pool, watch, chosen)
    end = time.monotonic() + lifetime_s
    try:
        while time.monotonic() < end:
            feed.news.clear()
            for message in (feed.sessions_message(), feed.watch_message()):
                if message is not None:
                    yield message
            await feed.wait()
    finally:
        feed.close()


class _Feed:
    """What one viewer was last sent, and the event that says its session has news."""

    def __init__(self, pool: SessionPool, watch: SessionWatch, chosen: str | None) -> None:
        self.pool, self.watch, self.chosen = pool, watch, chosen
        self.news = asyncio.Event()
        self.watched: WatchedSession | None = None
        self.ids: list[str] | None = None
        self.table_at = -math.inf
        self.pushed_at = -math.inf
        self.sent_index = 0
        self.sent_seen: tuple[int, bool] | None = None
        self.missing_said = False

    def sessions_message(self) -> str | None:
        rows = session_rows(self.pool, self.watch)
        ids = [row[0] for row in rows]
        if self.chosen and self.chosen not in ids and self.chosen in self.watch.sessions:
            ids.append(self.chosen)  # ended: still offered, so the viewer sees how it ended
        now = time.monotonic()
        if ids == self.ids and now - self.table_at < TABLE_REFRESH_S:
            return None
        self.ids, self.table_at = ids, now
        return _event("sessions", json.dumps({"rows": rows, "ids": ids}, default=str))

    def watch_message(self) -> str | None:
        watched = self._watched()
        if watched is None:
            if not self.chosen or self.missing_said:
                return None
            self.missing_said = True
            text = " · not open here, or not reset yet"
            return _event("watch", json.dumps({"session": self.chosen, "text": text}))
        seen = (watched.calls, watched.ended)
        if seen == self.sent_seen:
            return None
        entries = watched.since(self.sent_index, most=SHOWN_STEPS)
        replace = self.sent_index == 0 or bool(entries and entries[0].index > self.sent_index + 1)
        self.sent_seen, self.pushed_at = seen, time.monotonic()
        self.sent_index = entries[-1].index if entries else self.sent_index
        state = "ended" if watched.ended else "live"
        text = (f" · {state} · episode {watched.episodes} · {watched.steps} steps · "
                f"return so far {watched.return_so_far:g}")  # fmt: skip
        head = {"session": watched.session_id, "text": text, "replace": replace,
                "shown": SHOWN_STEPS, **_observation(watched)}  # fmt: skip
        rows = ",".join(step_row(entry) for entry in entries)
        return _event("watch", json.dumps(head)[:-1] + f', "rows": [{rows}]}}')

    async def wait(self) -> None:
        """Until the session has news (or :data:`IDS_CHECK_S` passed), and at least
        :data:`PUSH_INTERVAL_S` since the last step message."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.news.wait(), IDS_CHECK_S)
        if self.news.is_set():
            await asyncio.sleep(max(0.0, self.pushed_at + PUSH_INTERVAL_S - time.monotonic()))

    def _watched(self) -> WatchedSession | None:
        if self.watched is None and self.chosen:
            self.watched = self.watch.sessions.get(self.chosen)
            if self.watched is not None:
                self.watched.follow(self.news)
        return self.watched

    def close(self) -> None:
        if self.watched is not None:
            self.watched.unfollow(self.news)


def _observation(watched: WatchedSession) -> dict[str, Any]:
    """The latest observation as the tab shows it: JSON text, and images as PNG data URIs."""
    latest = watched.recent[-1].payload if watched.recent else {}
    view = split_observation(latest.get("observation"))
    images = [[path, _png_uri(image)] for path, image in view.images]
    return {"observation": json.dumps(view.summary, indent=2, default=str), "images": images}


def _png_uri(image: Any) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _event(kind: str, data: str) -> str:
    return f"event: {kind}\ndata: {data}\n\n"


def _refusal(status: int, detail: str, code: str) -> JSONResponse:
    return JSONResponse({"detail": detail, "code": code}, status_code=status)
