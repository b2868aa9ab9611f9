"""Watching live sessions: a session observer that keeps, for each open session, its episode,
steps, return so far and its latest steps, for read-only viewers (the web UI's Sessions tab).

The observer only appends to bounded buffers on the event loop, after each call, and sets the
:class:`asyncio.Event` of each viewer following the session (:meth:`WatchedSession.follow`):
watching never changes a session and adds no wait to its steps; a viewer reads the buffers in
its own time, so a slow one holds nothing back and makes nothing grow. Whether watching is
allowed is a setting, ``OPENENV_WATCH_SESSIONS`` (``1`` or ``0``); by default it is on locally
and off on a Hugging Face Space (where ``SPACE_ID`` is set), since a Space's sessions are other
people's.

Layer: server.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openenv_hub.server.sessions import SessionPool

__all__ = [
    "WATCH_SETTING",
    "SessionWatch",
    "WatchedSession",
    "WatchedStep",
    "session_watch",
    "watching_allowed",
    "watching_refused_message",
]

WATCH_SETTING = "OPENENV_WATCH_SESSIONS"
MAX_WATCHED_STEPS = 200  # the latest steps kept per session
MAX_ENDED_SESSIONS = 20  # ended sessions kept, so a viewer sees how they ended

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def watching_allowed(environ: dict[str, str] | None = None) -> bool:
    """Whether live sessions may be watched: ``$OPENENV_WATCH_SESSIONS``, else on unless the
    server runs on a Space."""
    env = os.environ if environ is None else environ
    chosen = env.get(WATCH_SETTING, "").strip().lower()
    if chosen in _TRUE:
        return True
    if chosen in _FALSE:
        return False
    return not env.get("SPACE_ID")


def watching_refused_message() -> str:
    """What a viewer is told where watching is off, and how to turn it on."""
    return (
        "Watching sessions is off on this server. Its owner can turn it on by setting "
        f"{WATCH_SETTING}=1 (on a Space: a variable in the Space's settings) and restarting it."
    )


@dataclass
class WatchedStep:
    """One reset or step as a viewer sees it. ``index`` counts calls of the session from 1."""

    index: int
    episode: int
    step: int
    action: dict[str, Any]
    payload: dict[str, Any]
    at: float
    row: str | None = field(default=None, compare=False)
    """The step as viewers are sent it (JSON), made once by the first viewer that sends it."""


@dataclass
class WatchedSession:
    """What the watch keeps of one session."""

    session_id: str
    episodes: int = 0
    steps: int = 0
    return_so_far: float = 0.0
    last_activity: float = field(default_factory=time.time)
    calls: int = 0
    ended: bool = False
    recent: deque[WatchedStep] = field(default_factory=lambda: deque(maxlen=MAX_WATCHED_STEPS))
    viewers: set[asyncio.Event] = field(default_factory=set, repr=False)

    def add(self, action: dict[str, Any], payload: dict[str, Any]) -> None:
        self.calls += 1
        self.last_activity = time.time()
        entry = WatchedStep(self.calls, self.episodes, self.steps, action, payload, time.time())
        self.recent.append(entry)
        self.tell_viewers()

    def follow(self, news: asyncio.Event) -> None:
        """Set ``news`` after each call of the session and at its end, for a viewer (which
        clears it when it has read what changed, and calls :meth:`unfollow` when it goes)."""
        self.viewers.add(news)

    def unfollow(self, news: asyncio.Event) -> None:
        self.viewers.discard(news)

    def tell_viewers(self) -> None:
        for news in self.viewers:
            news.set()

    def since(self, index: int, *, most: int | None = None) -> list[WatchedStep]:
        """The kept steps after call ``index``, the latest ``most`` of them at most, oldest
        first (read from the newest end: a fast session's older steps are not read)."""
        newest = itertools.takewhile(lambda entry: entry.index > index, reversed(self.recent))
        return list(itertools.islice(newest, most))[::-1]


class SessionWatch:
    """A session observer keeping each open session's :class:`WatchedSession`."""

    def __init__(self) -> None:
        self.sessions: dict[str, WatchedSession] = {}

    def _session(self, session_id: str) -> WatchedSession:
        found = self.sessions.get(session_id)
        if found is None:
            found = self.sessions[session_id] = WatchedSession(session_id)
        return found

    def on_reset(
        self,
        session_id: str,
        params: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        watched = self._session(session_id)
        watched.episodes += 1
        watched.steps, watched.return_so_far = 0, 0.0
        watched.add(params, payload)

    def on_step(
        self,
        session_id: str,
        action: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        watched = self._session(session_id)
        watched.steps += 1
        reward = payload.get("reward")
        if isinstance(reward, (int, float)):
            watched.return_so_far += float(reward)
        watched.add(action, payload)

    def on_close(self, session_id: str) -> None:
        watched = self.sessions.get(session_id)
        if watched is not None:
            watched.ended = True
            watched.tell_viewers()
        ended = [key for key, entry in self.sessions.items() if entry.ended]
        for key in ended[:-MAX_ENDED_SESSIONS]:
            del self.sessions[key]


def session_watch(pool: SessionPool) -> SessionWatch | None:
    """``pool``'s session watch, attached on first use; None where watching is off."""
    if not watching_allowed():
        return None
    found = next((o for o in pool.observers if isinstance(o, SessionWatch)), None)
    if found is None:
        found = SessionWatch()
        pool.observers.append(found)
    return found
