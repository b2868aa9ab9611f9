"""Watching live sessions: a session observer that keeps, for each open session, its episode,
steps, return so far and its latest steps, for read-only viewers (the web UI's Sessions tab).

The observer only appends to bounded buffers on the event loop, after each call, and sets the
:class:`asyncio.Event` of each viewer following the session (:meth:`WatchedSession.follow`):
watching never changes a session and adds no wait to its steps; a viewer reads the buffers in
its own time, so a slow one holds nothing back and makes nothing grow.

For forks, the watch keeps each session's current and previous episode
(:class:`WatchedEpisode`): every step's action and the id of the snapshot the server kept after
it, up to :data:`MAX_EPISODE_STEPS` steps; the replies themselves only for the reset and the
latest :data:`MAX_WATCHED_STEPS` steps. Where the environment takes snapshots, the watch asks
for them while someone views the sessions (or where the trajectory recorder has them taken
anyway): a snapshot after every step costs the stepping client time.

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
import itertools
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openenv_hub.server.watch_rule import (
    BIND_HOST_SETTING,
    LEGACY_WATCH_SETTING,
    WATCH_SETTING,
    WatchRule,
    is_loopback_host,
    watch_rule,
    watching_allowed,
    watching_refused_message,
)
from openenv_hub.types import ReplayFacts

if TYPE_CHECKING:
    from openenv_hub.server.sessions import SessionPool

__all__ = [
    "BIND_HOST_SETTING",
    "LEGACY_WATCH_SETTING",
    "WATCH_SETTING",
    "SessionWatch",
    "WatchRule",
    "WatchedEpisode",
    "WatchedSession",
    "WatchedStep",
    "is_loopback_host",
    "session_watch",
    "watch_rule",
    "watching_allowed",
    "watching_refused_message",
]

MAX_WATCHED_STEPS = 200  # the latest steps kept per session, with their replies
MAX_EPISODE_STEPS = 50_000  # the steps of an episode kept for a fork (action and snapshot id)
MAX_ENDED_SESSIONS = 20  # ended sessions kept, so a viewer sees how they ended


@dataclass
class WatchedStep:
    """One reset or step as a viewer sees it. ``index`` counts calls of the session from 1."""

    index: int
    episode: int
    step: int
    action: dict[str, Any]
    payload: dict[str, Any] | None
    """The reply; None once the step is no longer among the latest (a reset's is kept)."""
    at: float
    snapshot: str | None = None
    """The id of the snapshot the server kept after the call (None: it kept none)."""
    digest: str | None = None
    """The environment's state digest after the call (None: it gives none)."""
    row: str | None = field(default=None, compare=False)
    """The step as viewers are sent it (JSON), made once by the first viewer that sends it."""
    done: bool = False
    """Whether the call's reply ended the episode."""


@dataclass
class WatchedEpisode:
    """One episode of a watched session as a fork needs it: its calls in order, from its reset
    (or, for an episode a restored snapshot began, from the step it was restored at).

    Attributes:
        number: The episode's number in the session (1, 2, ...).
        entries: The calls, the first at step :attr:`first_step`; at most
            :data:`MAX_EPISODE_STEPS` (:attr:`complete` is False past them).
        restored: Whether the episode began from a restored snapshot, not a reset.
        complete: False once the episode went past :data:`MAX_EPISODE_STEPS` steps.
        replay_refusal: Why the environment said, at the reset, that the episode would not
            replay exactly (no seed, say); None where it would, or did not say.
    """

    number: int
    entries: list[WatchedStep]
    restored: bool = False
    complete: bool = True
    replay_refusal: str | None = None

    @property
    def first_step(self) -> int:
        return self.entries[0].step

    @property
    def last_step(self) -> int:
        return self.entries[-1].step

    @property
    def done(self) -> bool:
        """Whether the last step kept ended the episode."""
        return self.entries[-1].done

    def summary(self, *, live: bool) -> str:
        """``episode 3 (steps 0 to 57, done)``; ``live``: the session still plays it."""
        ending = "done" if self.done else ("under way" if live else "not finished")
        return f"episode {self.number} (steps {self.first_step} to {self.last_step}, {ending})"

    def at(self, step: int) -> WatchedStep | None:
        """The call at ``step``, if kept."""
        index = step - self.first_step
        return self.entries[index] if 0 <= index < len(self.entries) else None


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
    current: WatchedEpisode | None = None
    """The episode under way (or the last one, once the session ended)."""
    previous: WatchedEpisode | None = None
    """The episode before :attr:`current`."""

    def add(
        self, action: dict[str, Any], payload: dict[str, Any], snapshot: str | None = None
    ) -> WatchedStep:
        self.calls += 1
        self.last_activity = time.time()
        entry = WatchedStep(
            self.calls, self.episodes, self.steps, action, payload, time.time(), snapshot,
            done=bool(payload.get("done")),
        )  # fmt: skip
        if len(self.recent) == self.recent.maxlen and self.recent[0].step != 0:
            self.recent[0].payload = self.recent[0].row = None  # kept by its episode: lighter
        self.recent.append(entry)
        self.tell_viewers()
        return entry

    def begin(self, entry: WatchedStep, *, restored: bool = False) -> None:
        """``entry`` (a reset, or a restore) begins an episode."""
        if self.current is not None:
            self.previous = self.current
        self.current = WatchedEpisode(self.episodes, [entry], restored=restored)

    def extend(self, entry: WatchedStep) -> None:
        """``entry`` is a step of the current episode."""
        episode = self.current
        if episode is None:
            return
        if len(episode.entries) < MAX_EPISODE_STEPS:
            episode.entries.append(entry)
        else:
            episode.complete = False

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
    """A session observer keeping each open session's :class:`WatchedSession`.

    Args:
        observers: The session core's observers, this one among them: where another wants
            snapshots (the trajectory recorder), the watch is given their ids too.
    """

    def __init__(self, observers: list[Any] | None = None) -> None:
        self.sessions: dict[str, WatchedSession] = {}
        #: Viewers of the Sessions view open now (see :attr:`wants_snapshots`).
        self.viewing = 0
        self._observers = observers if observers is not None else []

    @property
    def wants_snapshots(self) -> bool:
        """Whether the session core is to take a snapshot after each call, for exact forks:
        while someone views the sessions (a snapshot costs the stepping client time), or where
        another observer has them taken anyway."""
        return self.viewing > 0 or any(
            getattr(o, "wants_snapshots", False) for o in self._observers if o is not self
        )

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
        snapshot: str | None = None,
        replay: ReplayFacts | None = None,
    ) -> None:
        """A reset; ``replay``: what the environment said of replaying the episode (its
        ``replay_refusal``, where it gives one)."""
        watched = self._session(session_id)
        watched.episodes += 1
        watched.steps, watched.return_so_far = 0, 0.0
        entry = watched.add(params, payload, snapshot)
        entry.digest = None if replay is None else replay.state_digest
        watched.begin(entry)
        if watched.current is not None:
            watched.current.replay_refusal = None if replay is None else replay.replay_refusal

    def on_step(
        self,
        session_id: str,
        action: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
        snapshot: str | None = None,
        replay: ReplayFacts | None = None,
    ) -> None:
        watched = self._session(session_id)
        watched.steps += 1
        reward = payload.get("reward")
        if isinstance(reward, (int, float)):
            watched.return_so_far += float(reward)
        entry = watched.add(action, payload, snapshot)
        entry.digest = None if replay is None else replay.state_digest
        watched.extend(entry)

    def on_restore(self, session_id: str, step: int, payload: dict[str, Any]) -> None:
        """The session was brought to a snapshot of step ``step``: a new episode from there
        (its return so far counts from there too)."""
        watched = self._session(session_id)
        watched.episodes += 1
        watched.steps, watched.return_so_far = step, 0.0
        watched.begin(watched.add({"restored_step": step}, payload), restored=True)

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
        found = SessionWatch(pool.observers)
        pool.observers.append(found)
    return found
