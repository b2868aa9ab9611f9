"""Watching live sessions: a session observer that keeps, for each open session, its episode,
steps, return so far and its latest steps, for read-only viewers (the web UI's Sessions tab).

The observer only appends to bounded buffers on the event loop, after each call, and sets the
:class:`asyncio.Event` of each viewer following the session (:meth:`WatchedSession.follow`):
watching never changes a session and adds no wait to its steps; a viewer reads the buffers in
its own time, so a slow one holds nothing back and makes nothing grow.

Who may watch (:func:`watch_rule`) is one rule for everything that shows one client's sessions
to another: the Sessions view and its stream, forking a watched session, the episodes a server
recorded (the Replay tab's list, ``GET /episodes``). It is on only where the server is local to
one user: bound to a loopback address (``openenv serve``'s default) and not on a Hugging Face
Space; or where the operator turns it on (``create_app(watch=True)``, ``$OPENENV_WATCH=1``).
The images this project builds set ``OPENENV_WATCH=0``: a container's loopback may be the
host's (a runtime that shares the host's network), and other people reach it.

Layer: server.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import os
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openenv_hub.server.sessions import SessionPool

__all__ = [
    "BIND_HOST_SETTING",
    "LEGACY_WATCH_SETTING",
    "WATCH_SETTING",
    "SessionWatch",
    "WatchRule",
    "WatchedSession",
    "WatchedStep",
    "is_loopback_host",
    "session_watch",
    "watch_rule",
    "watching_allowed",
    "watching_refused_message",
]

WATCH_SETTING = "OPENENV_WATCH"
#: The setting's earlier name, still read when ``OPENENV_WATCH`` is not set.
LEGACY_WATCH_SETTING = "OPENENV_WATCH_SESSIONS"
#: The address the server is bound to, as ``serve_app`` (and ``openenv serve``) set it.
BIND_HOST_SETTING = "OPENENV_BIND_HOST"
MAX_WATCHED_STEPS = 200  # the latest steps kept per session
MAX_ENDED_SESSIONS = 20  # ended sessions kept, so a viewer sees how they ended

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class WatchRule:
    """Whether others' sessions may be watched, listed and forked here, and why.

    Attributes:
        allowed: Watching is on.
        reason: Why, in words a log line or a refusal can show.
        shared: On while the server is not local to one user (the operator turned it on for a
            server others reach): the startup banner says so.
    """

    allowed: bool
    reason: str
    shared: bool = False


def is_loopback_host(host: str | None) -> bool:
    """Whether ``host`` (an address a server binds to) is a loopback address or name."""
    if not host:
        return False
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _chosen(env: Mapping[str, str]) -> bool | None:
    for name in (WATCH_SETTING, LEGACY_WATCH_SETTING):
        chosen = env.get(name, "").strip().lower()
        if chosen in _TRUE:
            return True
        if chosen in _FALSE:
            return False
    return None


def watch_rule(
    explicit: bool | None = None,
    bind_host: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> WatchRule:
    """The rule of the module's docstring: ``explicit`` (``create_app(watch=...)``), else
    ``$OPENENV_WATCH``, else on only for a server bound to a loopback address (``bind_host``,
    else ``$OPENENV_BIND_HOST``) that is not on a Space."""
    env = os.environ if environ is None else environ
    host = bind_host or env.get(BIND_HOST_SETTING) or None
    local = is_loopback_host(host) and not env.get("SPACE_ID")
    chosen = explicit if explicit is not None else _chosen(env)
    if chosen is not None:
        source = "watch=" + str(chosen) if explicit is not None else f"{WATCH_SETTING}"
        return WatchRule(chosen, f"turned {'on' if chosen else 'off'} by {source}",
                         shared=chosen and not local)  # fmt: skip
    if env.get("SPACE_ID"):
        return WatchRule(False, "the server runs on a Space, where sessions are other people's")
    if host is None:
        return WatchRule(False, "the address the server is bound to is unknown (it was not "
                         "started by openenv serve or serve_app)")  # fmt: skip
    if not local:
        return WatchRule(False, f"the server is bound to {host}, which others can reach")
    return WatchRule(True, f"the server is bound to {host}, a loopback address")


def watching_allowed(environ: Mapping[str, str] | None = None) -> bool:
    """Whether :func:`watch_rule` allows watching, from the environment alone."""
    return watch_rule(environ=environ).allowed


def watching_refused_message(rule: WatchRule | None = None) -> str:
    """What a viewer is told where watching is off, and how to turn it on."""
    why = f" ({rule.reason})" if rule is not None and not rule.allowed else ""
    return (
        f"Watching sessions is off on this server{why}. Its owner can turn it on by setting "
        f"{WATCH_SETTING}=1 (on a Space: a variable in the Space's settings) and restarting it, "
        "or with create_app(watch=True)."
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
    """``pool``'s session watch, attached on first use; None where watching is off
    (``pool.watch_rule()``)."""
    if not pool.watch_rule().allowed:
        return None
    found = next((o for o in pool.observers if isinstance(o, SessionWatch)), None)
    if found is None:
        found = SessionWatch()
        pool.observers.append(found)
    return found
