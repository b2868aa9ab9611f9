"""One session: its environment, where its calls run, and holding it for one call.

:class:`~openenv_hub.server.lifecycle.SessionLifecycle` opens and closes sessions;
:class:`SessionUse` is how a request holds one while it calls its environment.

Layer: server.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.errors import SessionClosedError
from openenv_hub.model.environment import Environment
from openenv_hub.rubrics.episode import EpisodeScorer
from openenv_hub.rubrics.ranges import UNBOUNDED
from openenv_hub.server.worker import Worker

__all__ = ["CloseCallback", "Session", "SessionUse"]

CloseCallback = Callable[[str], Awaitable[None]]


@dataclass(eq=False, slots=True)
class Session:
    """One environment instance and the thread its synchronous methods run on.

    ``id`` is a display id: what the Sessions view, logs and observers show; it grants nothing.
    ``key`` is the capability of a session addressed by name (``openenv/session/create``): only
    the client that created the session is told it; WebSocket sessions have none (they are bound
    to their connection).
    """

    id: str
    kind: str
    worker: Worker | None  # None: its calls run inline, on the event loop
    owns_worker: bool
    reuse_worker: bool = False  # give the thread back to the pool's spares when done
    env: Environment[Any, Any, Any] | None = None
    created_at: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    step_count: int = 0
    busy: int = 0  # calls waiting for or holding the lock
    thread_call_since: float | None = None  # a call runs on the thread, since (monotonic)
    caller: asyncio.Task[Any] | None = None  # the task whose call holds the lock
    closed: bool = False
    key: str | None = field(default=None, repr=False)
    attached: bool = False  # a WebSocket joined this session with /ws?session_id=...
    close_when_detached: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    on_close: list[CloseCallback] = field(default_factory=list)
    scorer: EpisodeScorer | None = None  # the environment's rubric, applied after each step
    client: str | None = None  # the address of the client that opened it
    episode_started: bool = False  # reset at least once (see openenv_hub.model.episode_rules)
    reward_range: tuple[float, float] = UNBOUNDED  # the environment's declared reward range

    @property
    def ready(self) -> bool:
        return self.env is not None and not self.closed

    def hold(self) -> None:
        """Hold the session, free at this moment, for a call no task waits on
        (:meth:`SessionPool.start_step <openenv_hub.server.sessions.SessionPool.start_step>`);
        :meth:`let_go` when it returns."""
        self.busy += 1
        acquiring = self.lock.acquire()
        try:
            acquiring.send(None)  # a free lock is taken without waiting
        except StopIteration:
            self.caller = None
            self.last_active = time.monotonic()
            return
        acquiring.close()
        self.busy -= 1
        raise RuntimeError(f"session {self.id} was held by another call")

    def let_go(self) -> None:
        """The call :meth:`hold` was for has returned."""
        self.caller = None
        self.lock.release()
        self.busy -= 1
        self.last_active = time.monotonic()


class SessionUse:
    """The context of :meth:`SessionLifecycle.use <openenv_hub.server.lifecycle.SessionLifecycle.use>`
    (a class, not a generator: it runs on every call)."""

    __slots__ = ("session",)

    def __init__(self, session: Session) -> None:
        self.session = session

    async def __aenter__(self) -> Environment[Any, Any, Any]:
        session = self.session
        if not session.ready:
            raise _closed(session)
        session.busy += 1
        try:
            await session.lock.acquire()
        except BaseException:
            session.busy -= 1
            raise
        env = session.env
        if env is None or session.closed:  # closed while we waited
            session.lock.release()
            session.busy -= 1
            raise _closed(session)
        session.caller = asyncio.current_task()
        session.last_active = time.monotonic()
        return env

    async def __aexit__(self, *exc_info: object) -> None:
        self.session.let_go()


def _closed(session: Session) -> SessionClosedError:
    return SessionClosedError(
        f"Session {session.id} is closed; open a new session (reconnect) to continue",
        session_id=session.id,
    )
