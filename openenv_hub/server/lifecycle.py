"""The lifecycle half of the session core: slots, threads, opening, closing and the watchdog.

:class:`~openenv_hub.server.sessions.SessionPool` builds on :class:`SessionLifecycle` to drive
the environments. Each session owns one environment instance; its synchronous methods all run on
the one thread the session is pinned to (so libraries that need thread affinity work; see
:mod:`openenv_hub.server.threads`).

Every session holds a slot of ``max_concurrent_envs``, stateless HTTP calls included, until its
environment is closed. A session closed while its thread still runs a call keeps its slot until
the call returns, or until ``step_hard_timeout_s`` passes: then the thread is abandoned (counted
in ``abandoned_threads``, logged once) and the slot freed. A watchdog closes sessions idle for
longer than ``idle_timeout_s`` and enforces the hard timeout
(:mod:`openenv_hub.server.watchdog`).

Layer: server.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import openenv_hub.server.settings as settings
from openenv_hub.errors import (
    ConfigurationError,
    EnvironmentFactoryError,
    SessionError,
    SessionNotFoundError,
)
from openenv_hub.model.environment import Environment
from openenv_hub.rubrics.episode import EpisodeScorer
from openenv_hub.rubrics.ranges import declared_reward_range
from openenv_hub.server.capacity import SessionRoom, check_client_share, resolve_capacity
from openenv_hub.server.observers import SessionObserver, notify
from openenv_hub.server.session import Session, SessionUse
from openenv_hub.server.session_keys import SessionKeys, new_display_id
from openenv_hub.server.settings import DEFAULT_MAX_SESSIONS, DEFAULT_STEP_HARD_TIMEOUT_S
from openenv_hub.server.threads import SessionThreads
from openenv_hub.server.watch_rule import WatchRule, watch_rule
from openenv_hub.server.watchdog import Watchdog
from openenv_hub.server.worker import within
from openenv_hub.support.deprecation import warn_renamed
from openenv_hub.transport.uvicorn_serving import collector_follows

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_STEP_HARD_TIMEOUT_S",
    "SessionLifecycle",
]

logger = logging.getLogger("openenv_hub.server")

DEFAULT_IDLE_TIMEOUT_S = 300.0
#: The kind of the session of one stateless HTTP request.
EPHEMERAL = "http-ephemeral"
CLOSE_TIMEOUT_S = 10.0

EnvFactory = Callable[[], Environment[Any, Any, Any]]


class SessionLifecycle:
    """Creates, reaps and closes environment sessions, within a number of slots.

    ``close_timeout_s`` bounds an environment's ``close()``, the wait of ``close()`` for a call
    in flight, and the whole of ``aclose()``.

    Args:
        env_factory: A class or function returning a new environment instance.
        action_cls: The action model of the environment; step payloads are validated against it.
        max_concurrent_envs: Sessions allowed at once, stateless calls included. Default:
            ``$MAX_CONCURRENT_ENVS`` or 64; 1 for environments with
            ``SUPPORTS_CONCURRENT_SESSIONS = False``. (``max_sessions`` is its deprecated name.)
        max_sessions_per_client: Sessions one client (address) may hold at once; default
            ``$OPENENV_MAX_SESSIONS_PER_CLIENT``, else no limit of its own.
        idle_timeout_s: Close sessions with no activity for this long; ``None`` disables reaping.
        step_hard_timeout_s: Abandon a thread whose call has run this long (default
            ``$OPENENV_STEP_HARD_TIMEOUT_S`` or 600; see :mod:`openenv_hub.server.settings`).
        run_on_event_loop: Run synchronous calls inline on the event loop (default: the
            environment class's ``RUNS_ON_EVENT_LOOP``; see :mod:`openenv_hub.server.threads`).
        env_name: Name reported by ``metadata()``; defaults to the environment's own.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        *,
        action_cls: type[Any],
        max_concurrent_envs: int | None = None,
        max_sessions_per_client: int | None = None,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        step_hard_timeout_s: float | None = None,
        run_on_event_loop: bool | None = None,
        env_name: str | None = None,
        max_sessions: int | None = None,
    ) -> None:
        if max_sessions is not None:
            warn_renamed(
                "SessionPool(max_sessions=...)", "max_concurrent_envs=...", removed_in="0.2"
            )
            max_concurrent_envs = (
                max_sessions if max_concurrent_envs is None else max_concurrent_envs
            )
        if not callable(env_factory) or isinstance(env_factory, Environment):
            raise ConfigurationError(
                f"env_factory must be a class or a function returning an environment, got "
                f"{type(env_factory).__name__}. Pass the class itself (EchoEnvironment, not "
                "EchoEnvironment())."
            )
        if idle_timeout_s is not None and idle_timeout_s <= 0:
            raise ConfigurationError("idle_timeout_s must be a positive number of seconds, or None")
        self._factory = env_factory
        self._factory_name = getattr(env_factory, "__name__", type(env_factory).__name__)
        self.action_cls = action_cls
        self._env_cls: type[Environment[Any, Any, Any]] | None = (
            env_factory if isinstance(env_factory, type) else None
        )
        if self._env_cls is not None:
            declared_reward_range(self._env_cls)  # a range that is none fails here, not per session
        self.max_concurrent_envs = resolve_capacity(
            self._env_cls, self._factory_name, max_concurrent_envs
        )
        self.max_sessions_per_client = settings.max_sessions_per_client(max_sessions_per_client)
        self.idle_timeout_s = idle_timeout_s
        self.step_hard_timeout_s = settings.step_hard_timeout_s(step_hard_timeout_s)
        self.env_name = env_name
        self.close_timeout_s = CLOSE_TIMEOUT_S
        self._sessions: dict[str, Session] = {}  # by display id: WebSocket, MCP and UI sessions
        self._keys = SessionKeys()  # the sessions addressed by name, by their keys
        self._ephemeral: set[Session] = set()  # stateless HTTP calls
        self._draining: set[Session] = set()  # closed, their thread still running a call
        self._finishing: set[asyncio.Task[None]] = set()
        self.threads = SessionThreads.for_environment(
            self._env_cls, self.env_name or self._factory_name, run_on_event_loop
        )
        self.room = SessionRoom(self.max_concurrent_envs, env_name or self._factory_name)
        self.watchdog = Watchdog(self)
        self.observers: list[SessionObserver] = []  # told of every reset, step and close
        #: Whether others may watch, list and fork this pool's sessions: ``create_app``'s
        #: ``watch`` (None: by the rule of :func:`~openenv_hub.server.watch.watch_rule`).
        self.watch: bool | None = None
        #: The address the server is bound to, where the code serving it says (``serve_app``).
        self.bind_host: str | None = None

    # -- configuration ---------------------------------------------------------------------

    @property
    def max_sessions(self) -> int:
        """Deprecated: the old name of ``max_concurrent_envs``."""
        warn_renamed(
            "SessionPool.max_sessions", "SessionPool.max_concurrent_envs", removed_in="0.2"
        )
        return self.max_concurrent_envs

    @property
    def abandoned_threads(self) -> int:
        """Threads given up on after ``step_hard_timeout_s`` (reported by ``/health``)."""
        return self.threads.abandoned

    @property
    def factory(self) -> EnvFactory:
        """The class or function that creates each session's environment."""
        return self._factory

    @property
    def factory_name(self) -> str:
        return self._factory_name

    @property
    def env_cls(self) -> type[Environment[Any, Any, Any]] | None:
        return self._env_cls

    @property
    def active_sessions(self) -> int:
        """Slots in use: open sessions, stateless calls, and closed sessions still draining."""
        return len(self._sessions) + len(self._ephemeral) + len(self._draining)

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    def watch_rule(self) -> WatchRule:
        """Whether others may watch, list and fork this pool's sessions, and why."""
        return watch_rule(self.watch, self.bind_host)

    # -- opening ---------------------------------------------------------------------------

    async def open(
        self, kind: str = "ws", *, client: str | None = None, addressable: bool = False
    ) -> Session:
        """Reserve a slot and create a new environment for it; ``client`` is the address of
        whoever asked (for ``max_sessions_per_client``). An ``addressable`` session gets a key
        (:attr:`Session.key`), which :meth:`get` and :meth:`attach` take: give it to the caller
        and no one else.

        Raises:
            SessionCapacityError: every slot is in use, or the client's share is.
            EnvironmentFactoryError: the factory raised.
        """
        self._reserve(client)
        session = self._new_session(kind)
        session.client = client
        if addressable:
            self._keys.issue(session)
        self._sessions[session.id] = session
        collector_follows(self.active_sessions)
        self.watchdog.start()
        try:
            await self._create_env(session)
        except BaseException:
            await self.close(session, reason="factory failed")
            raise
        return session

    @contextlib.asynccontextmanager
    async def ephemeral(self, *, create: bool = True) -> AsyncIterator[Session]:
        """A session for one stateless HTTP request, holding a slot until it is closed; with
        ``create=False`` its environment is left for the caller to create (and :meth:`adopt`)."""
        self._reserve()
        session = self._new_session(EPHEMERAL, reuse_worker=True)
        self._ephemeral.add(session)
        self.watchdog.start()
        try:
            if create:
                await self._create_env(session)
            yield session
        finally:
            await self.close(session, reason="request finished")

    def _reserve(self, client: str | None = None) -> None:
        self.room.check(self.active_sessions, self.max_concurrent_envs)
        if client is not None and self.max_sessions_per_client is not None:
            held = sum(session.client == client for session in self._sessions.values())
            check_client_share(client, held, self.max_sessions_per_client)

    def _new_session(self, kind: str, *, reuse_worker: bool = False) -> Session:
        """A session with where its calls run: a thread of its own, the shared one, a spare
        thread (for short-lived sessions), or the event loop."""
        session_id = new_display_id(self._sessions)
        worker, owns = self.threads.assign(session_id, reuse=reuse_worker)
        return Session(
            id=session_id, kind=kind, worker=worker, owns_worker=owns, reuse_worker=reuse_worker
        )

    async def _create_env(self, session: Session) -> None:
        try:
            env = await self.run_sync(session, self._factory)
        except (SessionError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise self.factory_failed(exc) from exc
        self.adopt(session, env)

    def factory_failed(self, exc: Exception) -> EnvironmentFactoryError:
        """What a client is told when the factory raised ``exc`` (logged in full)."""
        logger.error("Environment factory %r failed", self._factory_name, exc_info=exc)
        return EnvironmentFactoryError(
            self._factory_name,
            message=f"Environment factory '{self._factory_name}' failed to create instance: "
            f"{type(exc).__name__}: {exc}",
        )

    def adopt(self, session: Session, env: Environment[Any, Any, Any]) -> None:
        """Give ``session`` the environment created for it."""
        session.scorer = EpisodeScorer.for_env(env)
        session.reward_range = declared_reward_range(env)
        session.env = env

    def get(self, key: str) -> Session:
        """The session ``key`` addresses (see :mod:`openenv_hub.server.session_keys`).

        Raises:
            SessionNotFoundError: no session holds this key (closed, or never one of ours).
            SessionError: the session is still being created.
        """
        session = self._keys.find(key)
        if session is None or session.closed:
            raise SessionNotFoundError(key)
        if session.env is None:
            raise SessionError(
                "The session is still initializing; retry shortly", session_id=session.id
            )
        return session

    def attach(self, key: str) -> Session:
        """Let a WebSocket join a session created over HTTP, by its key."""
        session = self.get(key)
        if session.attached:
            raise SessionError(
                "The session already has an attached WebSocket", session_id=session.id
            )
        session.attached = True
        return session

    async def detach(self, session: Session) -> None:
        """The attached WebSocket left; the session lives on unless a close was requested."""
        session.attached = False
        if session.close_when_detached:
            await self.close(session, reason="closed by openenv/session/close")

    # -- using -----------------------------------------------------------------------------

    def use(self, session: Session) -> SessionUse:
        """``async with pool.use(session) as env``: hold the session's lock and get its
        environment (one call at a time; a session closed meanwhile raises
        :class:`~openenv_hub.errors.SessionClosedError`)."""
        return SessionUse(session)

    async def run_sync(self, session: Session, fn: Callable[[], Any]) -> Any:
        """Run a synchronous call of the session's environment: inline when the pool runs on
        the event loop, else on the session's thread. Cancelling the caller does not stop the
        thread: the session keeps its slot (if closed meanwhile) until the call returns."""
        if session.worker is None:
            return self.threads.run_inline(fn)
        returned = functools.partial(self._thread_call_returned, session)
        future = session.worker.run(fn, returned)
        session.thread_call_since = time.monotonic()
        return await future

    def _thread_call_returned(
        self, session: Session, result: Any, exc: BaseException | None
    ) -> None:
        if session.thread_call_since is None:  # abandoned meanwhile
            return
        session.thread_call_since = None
        if session not in self._draining:
            return
        if exc is None and session.env is None and isinstance(result, Environment):
            session.env = result  # built after its session closed: closed with the rest
        self._finish_later(session)

    # -- closing ---------------------------------------------------------------------------

    async def close(self, session: Session, reason: str = "closed") -> None:
        """Close a session and free its slot. Safe to call more than once.

        A call in flight is waited for (up to ``close_timeout_s``, then cancelled if it runs on
        the event loop); a call running on the session's thread keeps the slot until it returns.
        """
        if session.closed:
            return
        session.closed = True
        self._sessions.pop(session.id, None)
        self._keys.forget(session)
        self._ephemeral.discard(session)
        if self.observers:
            notify(self.observers, "on_close", session.id)
        callbacks, session.on_close = session.on_close, []
        for callback in callbacks:
            try:
                await callback(reason)
            except Exception:
                logger.exception("Session %s: close callback failed", session.id)
        await self._wait_for_caller(session)
        if session.thread_call_since is not None:
            self._draining.add(session)  # _thread_call_returned finishes the job
            return
        await self._finish(session)

    async def _wait_for_caller(self, session: Session) -> None:
        """Let a call running on the event loop end before the environment is closed."""
        caller = session.caller
        if caller is None or caller is asyncio.current_task() or session.thread_call_since:
            return
        try:
            await asyncio.wait_for(session.lock.acquire(), self.close_timeout_s)
        except (TimeoutError, asyncio.TimeoutError):
            caller.cancel()
            await asyncio.wait([caller], timeout=1.0)
        else:
            session.lock.release()

    def _finish_later(self, session: Session) -> None:
        task = asyncio.get_running_loop().create_task(self._finish(session))
        self._finishing.add(task)
        task.add_done_callback(self._finishing.discard)

    async def _finish(self, session: Session) -> None:
        """Close the environment (where its calls run) and release the thread and the slot."""
        env, session.env = session.env, None
        try:
            if env is not None and session.worker is None:
                self.threads.run_inline(env.close)
            elif env is not None and session.worker is not None:
                await within(self.close_timeout_s, session.worker.run(env.close))
        except (TimeoutError, asyncio.TimeoutError):
            logger.warning(
                "Session %s: environment close() took over %g s", session.id, self.close_timeout_s
            )
            self._abandon_thread(session)
        except Exception:
            logger.exception("Session %s: environment close() raised", session.id)
        self._release(session)

    def _release(self, session: Session) -> None:
        self._draining.discard(session)
        collector_follows(self.active_sessions)
        if session.owns_worker and session.worker is not None:
            self.threads.give_back(session.worker, reuse=session.reuse_worker)

    def _abandon_thread(self, session: Session) -> None:
        if session.worker is not None:
            session.owns_worker = False  # never handed out again
            self.threads.abandon(session.worker)

    async def aclose(self) -> None:
        """Close every session at once and stop the watchdog (the app's shutdown).

        Bounded: a call stuck on a thread, or an environment whose ``close()`` hangs, is left to
        its (daemon) thread instead of holding up the shutdown.
        """
        await self.watchdog.stop()
        closing = [
            asyncio.ensure_future(self.close(s, reason="server shutting down"))
            for s in [*self._sessions.values(), *self._ephemeral]
        ]
        pending = [*closing, *self._finishing]
        if pending:
            await asyncio.wait(pending, timeout=self.close_timeout_s)
        self.threads.shutdown()

    def occupied(self) -> list[Session]:
        """Every session holding a slot: open, stateless, and closed but still draining."""
        return [*self._sessions.values(), *self._ephemeral, *self._draining]

    async def abandon(self, session: Session) -> None:
        """Give up on a call stuck on the session's thread: free the slot, close the session."""
        logger.error(
            "Session %s: a call has run for over %g s (OPENENV_STEP_HARD_TIMEOUT_S); its thread "
            "is abandoned and the session closed",
            session.id,
            self.step_hard_timeout_s,
        )
        session.thread_call_since = None  # from now on, its return changes nothing
        env, session.env = session.env, None
        if env is not None and session.worker is not None:
            session.worker.post(env.close)  # runs if the thread ever returns
        self._abandon_thread(session)
        if session.caller is not None:
            session.caller.cancel()
        self._draining.discard(session)
        await self.close(session, reason="a step exceeded the server's hard time limit")
