"""The Sessions tab's live feed: a Server-Sent Events stream per viewer, pushed as the watched
session steps, so that a watching page neither polls nor costs a gradio event per update.

``GET {UI path}/watch?session=ID&tab=KEY`` (both optional) sends events of two kinds:

- ``sessions``: the sessions table (:func:`session_rows`) and the sessions a viewer may pick
  (:func:`session_choices`: display id, client and age), when they change (looked at every
  :data:`IDS_CHECK_S`) and every :data:`TABLE_REFRESH_S`. ``tab`` is the page's gradio session
  hash: the page's own session is left out of both;
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
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from openenv_hub.rubrics.episode import BREAKDOWN_KEY
from openenv_hub.server.session import Session
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
    "session_choices",
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


#: How each kind of session is named in the Client column (a kind not here: its name).
CLIENT_KINDS = {
    "ws": "WebSocket client",
    "mcp-http": "HTTP client",  # a session opened with openenv/session/create
    "ui": "web UI tab",
}


def client_label(session: Session) -> str:
    """``WebSocket client 127.0.0.1``: what opened the session, and from where."""
    kind = CLIENT_KINDS.get(session.kind, session.kind)
    return f"{kind} {session.client}" if session.client else kind


def age(seconds: float) -> str:
    """``40 s``, ``3 min``, ``2 h 5 min``: how long ago, coarsely."""
    if seconds < 60:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:.0f} min"


def _listed(pool: SessionPool, exclude: str | None) -> list[Session]:
    """The open sessions a viewer is shown: stateless calls and the viewer's own left out."""
    return [s for s in pool.sessions() if s.kind != "http-ephemeral" and s.id != exclude]


def session_rows(
    pool: SessionPool, watch: SessionWatch, *, exclude: str | None = None
) -> list[list[Any]]:
    """A row per open session (stateless calls and the session ``exclude`` left out), as the
    sessions table shows it."""
    rows = []
    now, clock = time.monotonic(), time.time()
    for session in _listed(pool, exclude):
        watched = watch.sessions.get(session.id) or WatchedSession(session.id)
        idle = f"{now - session.last_active:.1f} s ago"
        rows.append([session.id, client_label(session), age(clock - session.created_at),
                     watched.episodes, watched.steps, round(watched.return_so_far, 6), idle])  # fmt: skip
    return rows


def session_choices(
    pool: SessionPool, watch: SessionWatch, *, exclude: str | None = None
) -> list[tuple[str, str]]:
    """The session picker's choices, ``(label, display id)``: the label says the display id,
    the client and how long ago the session opened (to the minute, so the choices change
    seldom); the session ``exclude`` left out."""
    clock = time.time()
    return [
        (f"{s.id} · {client_label(s)} · opened {_coarse_age(clock - s.created_at)} ago", s.id)
        for s in _listed(pool, exclude)
    ]


def _coarse_age(seconds: float) -> str:
    return "under a minute" if seconds < 60 else age(seconds)


def step_row(entry: WatchedStep) -> str:
    """``entry`` as the steps table's row, a JSON array (made once, then kept on the entry)."""
    if entry.row is None:
        payload = entry.payload or {}
        breakdown = (payload.get("observation") or {}).get("metadata", {}).get(BREAKDOWN_KEY, {})
        cells = [entry.index, entry.episode, entry.step, _json(entry.action),
                 _json(payload.get("reward")), _json(payload.get("done")), _json(breakdown)]  # fmt: skip
        entry.row = json.dumps(cells)
    return entry.row


def step_rows(watched: WatchedSession) -> list[list[Any]]:
    """A row per step of ``watched`` among the latest :data:`SHOWN_STEPS`, oldest first."""
    return [json.loads(step_row(entry)) for entry in watched.since(0, most=SHOWN_STEPS)]


OwnSession = Callable[[str], "str | None"]
"""The display id of the session of the page whose gradio session hash is given, if any."""


def watch_route(
    pool: SessionPool, watch: SessionWatch | None, own_session: OwnSession | None = None
) -> Any:
    """The endpoint of :data:`WATCH_ROUTE` (``watch`` None: watching is off); ``own_session``
    finds the viewing page's own session, left out of what it is shown."""
    open_streams = 0

    async def stream(request: Request) -> Response:
        nonlocal open_streams
        if watch is None:
            return _refusal(403, watching_refused_message(pool.watch_rule()), "WATCHING_OFF")
        chosen = request.query_params.get("session") or None
        tab = request.query_params.get("tab") or ""
        if len(tab) > MAX_SESSION_ID_CHARS or (chosen and len(chosen) > MAX_SESSION_ID_CHARS):
            return _refusal(400, f"session: an id is at most {MAX_SESSION_ID_CHARS} characters "
                            "long; pick one from the Sessions tab.", "BAD_SESSION_ID")  # fmt: skip
        if open_streams >= MAX_VIEWERS:
            return _refusal(503, f"This server already sends {MAX_VIEWERS} live watches, its "
                            "bound; close a Sessions tab and try again.", "TOO_MANY_VIEWERS")  # fmt: skip
        open_streams += 1

        async def counted() -> AsyncIterator[str]:
            nonlocal open_streams
            try:
                mine = (lambda: own_session(tab)) if own_session is not None and tab else None
                async for message in watch_events(pool, watch, chosen, own=mine):
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
    own: Callable[[], str | None] | None = None,
) -> AsyncIterator[str]:
    """The Server-Sent Events of one viewer watching ``chosen`` (None: the table only);
    ``own`` gives the viewer's own session, left out of the table and the choices."""
    feed = _Feed(pool, watch, chosen, own)
    watch.viewing += 1  # snapshots are taken while someone views (exact forks)
    end = time.monotonic() + lifetime_s
    try:
        while time.monotonic() < end:
            feed.news.clear()
            for message in (feed.sessions_message(), feed.watch_message()):
                if message is not None:
                    yield message
            await feed.wait()
    finally:
        watch.viewing -= 1
        feed.close()


class _Feed:
    """What one viewer was last sent, and the event that says its session has news."""

    def __init__(
        self,
        pool: SessionPool,
        watch: SessionWatch,
        chosen: str | None,
        own: Callable[[], str | None] | None = None,
    ) -> None:
        self.pool, self.watch, self.chosen, self.own = pool, watch, chosen, own
        self.news = asyncio.Event()
        self.watched: WatchedSession | None = None
        self.choices: list[tuple[str, str]] | None = None
        self.table_at = -math.inf
        self.pushed_at = -math.inf
        self.sent_index = 0
        self.sent_seen: tuple[int, bool] | None = None
        self.missing_said = False

    def sessions_message(self) -> str | None:
        exclude = self.own() if self.own is not None else None
        choices = session_choices(self.pool, self.watch, exclude=exclude)
        now = time.monotonic()
        if choices == self.choices and now - self.table_at < TABLE_REFRESH_S:
            return None
        self.choices, self.table_at = choices, now
        rows = session_rows(self.pool, self.watch, exclude=exclude)
        ids = [value for _, value in choices]
        if self.chosen and self.chosen not in ids and self.chosen in self.watch.sessions:
            ids.append(self.chosen)  # ended: still offered, so the viewer sees how it ended
        message = {"rows": rows, "ids": ids, "choices": choices}
        return _event("sessions", json.dumps(message, default=str))

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
        if watched.previous is not None:
            text += f" · previous {watched.previous.summary(live=False)}"
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
    latest = (watched.recent[-1].payload if watched.recent else None) or {}
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
