"""The session core: the one place where environments are created, driven and closed.

HTTP routes, the ``/ws`` socket, ``/mcp`` and the web UI are thin adapters over
:class:`SessionPool`. Each session owns one environment instance. Synchronous environment methods
run on the session's own thread (so libraries that need thread affinity work); ``async`` ones run
on the event loop. Sessions idle for longer than ``idle_timeout_s`` are closed by a reaper, and
their transport is told so it can close its connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.environment import Environment
from openenv_hub.errors import (
    ConcurrencyConfigurationError,
    ConfigurationError,
    EnvironmentExecutionError,
    EnvironmentFactoryError,
    SessionCapacityError,
    SessionError,
    SessionNotFoundError,
)
from openenv_hub.protocol import observation_payload
from openenv_hub.rubrics.episode import EpisodeScorer
from openenv_hub.server.calls import CallPlan
from openenv_hub.server.observers import SessionObserver, notify
from openenv_hub.server.worker import Worker
from openenv_hub.tools import MCPEnvironment, ToolCallOutcome
from openenv_hub.types import (
    Action,
    CallToolAction,
    EnvironmentMetadata,
    ListToolsAction,
    Observation,
    Tool,
)

__all__ = ["DEFAULT_IDLE_TIMEOUT_S", "DEFAULT_MAX_SESSIONS", "Session", "SessionPool"]

logger = logging.getLogger("openenv_hub.server")

DEFAULT_MAX_SESSIONS = 64
DEFAULT_IDLE_TIMEOUT_S = 300.0
_MAX_SPARE_WORKERS = 8  # idle threads kept for stateless HTTP requests

EnvFactory = Callable[[], Environment[Any, Any, Any]]
CloseCallback = Callable[[str], Awaitable[None]]


@dataclass(eq=False)
class Session:
    """One environment instance and the thread its synchronous methods run on."""

    id: str
    kind: str
    worker: Worker
    owns_worker: bool
    reuse_worker: bool = False  # give the thread back to the pool's spares when done
    env: Environment[Any, Any, Any] | None = None
    created_at: float = field(default_factory=time.time)
    last_active: float = field(default_factory=time.monotonic)
    step_count: int = 0
    busy: int = 0
    closed: bool = False
    attached: bool = False  # a WebSocket joined this session with /ws?session_id=...
    close_when_detached: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    on_close: list[CloseCallback] = field(default_factory=list)
    scorer: EpisodeScorer | None = None  # the environment's rubric, applied after each step

    @property
    def ready(self) -> bool:
        return self.env is not None and not self.closed


class SessionPool:
    """Creates, drives, reaps and closes environment sessions.

    Args:
        env_factory: A class or function returning a new environment instance.
        action_cls: The action model of the environment; step payloads are validated against it.
        max_sessions: Concurrent sessions allowed. Default: ``$MAX_CONCURRENT_ENVS`` or 64;
            forced to 1 for environments that set ``SUPPORTS_CONCURRENT_SESSIONS = False``.
        idle_timeout_s: Close sessions with no activity for this long; ``None`` disables reaping.
        env_name: Name reported by ``metadata()``; defaults to the environment's own.
    """

    def __init__(
        self,
        env_factory: EnvFactory,
        *,
        action_cls: type[Action],
        max_sessions: int | None = None,
        idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
        env_name: str | None = None,
    ) -> None:
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
        self.max_sessions = self._resolve_capacity(max_sessions)
        self.idle_timeout_s = idle_timeout_s
        self.env_name = env_name
        self._sessions: dict[str, Session] = {}
        self._shared_worker: Worker | None = None
        self._spare_workers: list[Worker] = []
        self._reaper: asyncio.Task[None] | None = None
        self._metadata: EnvironmentMetadata | None = None
        self.observers: list[SessionObserver] = []  # told of every reset, step and close

    # -- configuration ---------------------------------------------------------------------

    def _resolve_capacity(self, requested: int | None) -> int:
        concurrent = getattr(self._env_cls, "SUPPORTS_CONCURRENT_SESSIONS", True)
        if requested is not None:
            if requested < 1:
                raise ConfigurationError(f"max_sessions must be at least 1, got {requested}")
            if requested > 1 and not concurrent:
                raise ConcurrencyConfigurationError(self._factory_name, requested)
            return requested
        if not concurrent:
            return 1
        from_env = os.environ.get("MAX_CONCURRENT_ENVS")
        if from_env:
            try:
                value = int(from_env)
            except ValueError:
                raise ConfigurationError(
                    f"MAX_CONCURRENT_ENVS must be a whole number, got {from_env!r}"
                ) from None
            if value < 1:
                raise ConfigurationError(f"MAX_CONCURRENT_ENVS must be at least 1, got {value}")
            return value
        return DEFAULT_MAX_SESSIONS

    @property
    def factory(self) -> EnvFactory:
        """The class or function that creates each session's environment."""
        return self._factory

    @property
    def factory_name(self) -> str:
        return self._factory_name

    @property
    def active_sessions(self) -> int:
        return len(self._sessions)

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    # -- lifecycle -------------------------------------------------------------------------

    async def open(self, kind: str = "ws") -> Session:
        """Reserve a slot and create a new environment for it.

        Raises:
            SessionCapacityError: ``max_sessions`` sessions are already open.
            EnvironmentFactoryError: the factory raised.
        """
        if len(self._sessions) >= self.max_sessions:
            raise SessionCapacityError(len(self._sessions), self.max_sessions)
        session = self._new_session(kind)
        self._sessions[session.id] = session
        self._ensure_reaper()
        try:
            await self._create_env(session)
        except BaseException:
            await self.close(session, reason="factory failed")
            raise
        return session

    @contextlib.asynccontextmanager
    async def ephemeral(self) -> AsyncIterator[Session]:
        """A session outside the pool's capacity, closed on exit (stateless HTTP requests)."""
        session = self._new_session("http-ephemeral", reuse_worker=True)
        try:
            await self._create_env(session)
            yield session
        finally:
            await self._dispose(session)

    def _new_session(self, kind: str, *, reuse_worker: bool = False) -> Session:
        """A session with its thread: its own, the shared one, or (for short-lived sessions) a
        spare thread that a finished short-lived session gave back."""
        session_id = str(uuid.uuid4())
        if self._env_cls is not None and self._env_cls.REQUIRES_SINGLE_THREAD_EXECUTOR:
            if self._shared_worker is None:
                self._shared_worker = Worker("openenv-env")
            return Session(id=session_id, kind=kind, worker=self._shared_worker, owns_worker=False)
        if reuse_worker and self._spare_workers:
            worker = self._spare_workers.pop()
        else:
            worker = Worker(f"openenv-session-{session_id[:8]}")
        return Session(
            id=session_id, kind=kind, worker=worker, owns_worker=True, reuse_worker=reuse_worker
        )

    async def _create_env(self, session: Session) -> None:
        try:
            env = await session.worker.run(self._factory)
        except Exception as exc:
            logger.exception("Environment factory %r failed", self._factory_name)
            raise EnvironmentFactoryError(
                self._factory_name,
                message=f"Environment factory '{self._factory_name}' failed to create instance: "
                f"{type(exc).__name__}: {exc}",
            ) from exc
        if session.closed:  # closed while the factory ran
            await session.worker.run(env.close)
            return
        session.scorer = EpisodeScorer.for_env(env)
        session.env = env

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise SessionNotFoundError(session_id)
        if session.env is None:
            raise SessionError(
                f"Session {session_id} is still initializing; retry shortly", session_id=session_id
            )
        return session

    def attach(self, session_id: str) -> Session:
        """Let a WebSocket join a session created over HTTP (``/ws?session_id=...``)."""
        session = self.get(session_id)
        if session.attached:
            raise SessionError(
                f"Session {session_id} already has an attached WebSocket", session_id=session_id
            )
        session.attached = True
        return session

    async def detach(self, session: Session) -> None:
        """The attached WebSocket left; the session lives on unless a close was requested."""
        session.attached = False
        if session.close_when_detached:
            await self.close(session, reason="closed by openenv/session/close")

    async def close(self, session: Session, reason: str = "closed") -> None:
        """Close a session and free its slot. Safe to call more than once."""
        if self._sessions.pop(session.id, None) is None and session.closed:
            return
        callbacks, session.on_close = session.on_close, []
        await self._dispose(session)
        for callback in callbacks:
            try:
                await callback(reason)
            except Exception:
                logger.exception("Session %s: close callback failed", session.id)

    async def _dispose(self, session: Session) -> None:
        if session.closed:
            return
        session.closed = True
        if self.observers:
            notify(self.observers, "on_close", session.id)
        env, session.env = session.env, None
        if env is not None:
            try:
                await session.worker.run(env.close)
            except Exception:
                logger.exception("Session %s: environment close() raised", session.id)
        if not session.owns_worker:
            return
        if session.reuse_worker and len(self._spare_workers) < _MAX_SPARE_WORKERS:
            self._spare_workers.append(session.worker)
        else:
            session.worker.shutdown()

    async def aclose(self) -> None:
        """Close every session and stop the reaper (the app's shutdown)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        for session in list(self._sessions.values()):
            await self.close(session, reason="server shutting down")
        if self._shared_worker is not None:
            self._shared_worker.shutdown()
            self._shared_worker = None
        while self._spare_workers:
            self._spare_workers.pop().shutdown()

    # -- idle reaping ----------------------------------------------------------------------

    def _ensure_reaper(self) -> None:
        if self.idle_timeout_s is None or (self._reaper is not None and not self._reaper.done()):
            return
        self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def _reap_forever(self) -> None:
        assert self.idle_timeout_s is not None
        interval = min(max(self.idle_timeout_s / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()

    async def reap_idle(self) -> int:
        """Close sessions idle for longer than ``idle_timeout_s``; returns how many."""
        if self.idle_timeout_s is None:
            return 0
        deadline = time.monotonic() - self.idle_timeout_s
        idle = [s for s in self._sessions.values() if not s.busy and s.last_active < deadline]
        for session in idle:
            logger.info("Closing session %s: idle for over %.0f s", session.id, self.idle_timeout_s)
            await self.close(session, reason=f"session idle for over {self.idle_timeout_s:g} s")
        return len(idle)

    # -- driving the environment -----------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _use(self, session: Session) -> AsyncIterator[Environment[Any, Any, Any]]:
        if session.env is None:
            raise SessionError(f"Session {session.id} is closed", session_id=session.id)
        session.busy += 1
        try:
            async with session.lock:
                session.last_active = time.monotonic()
                yield session.env
        finally:
            session.busy -= 1
            session.last_active = time.monotonic()

    async def _call(
        self, session: Session, run_async: bool, fn: Callable[..., Any], *args: Any, **kw: Any
    ) -> Any:
        try:
            if run_async:
                return await fn(*args, **kw)
            return await session.worker.run(functools.partial(fn, *args, **kw))
        except (SessionError, EnvironmentExecutionError):
            raise
        except Exception as exc:
            logger.exception(
                "Session %s: environment raised in %s", session.id, getattr(fn, "__name__", fn)
            )
            raise EnvironmentExecutionError(f"{type(exc).__name__}: {exc}") from exc

    def parse_action(self, data: dict[str, Any]) -> Action:
        """Validate a step payload against the action class (raises pydantic ValidationError).

        Environments whose action class is the base ``Action`` or an MCP action also accept
        ``{"type": "list_tools"}`` and ``{"type": "call_tool", ...}``.
        """
        kind = data.get("type")
        if self.action_cls in (Action, CallToolAction, ListToolsAction):
            if kind == "list_tools":
                return ListToolsAction.model_validate(data)
            if kind == "call_tool":
                return CallToolAction.model_validate(data)
        return self.action_cls.model_validate(data)

    async def reset(self, session: Session, params: dict[str, Any]) -> dict[str, Any]:
        async with self._use(session) as env:
            plan = CallPlan.of(type(env))
            kwargs = CallPlan.filter(params, plan.reset_params)
            fn = env.reset_async if plan.reset_async else env.reset
            started, clock = time.time(), time.perf_counter()
            obs = await self._call(session, plan.reset_async, fn, **kwargs)
            session.step_count = 0
            if session.scorer is not None:
                session.scorer.reset()
            payload = observation_payload(_checked(obs, "reset"))
            if self.observers:
                args = (params, payload)
                notify(
                    self.observers, "on_reset", session.id, *args, started_at=started, clock=clock
                )
            return payload

    async def step(
        self, session: Session, action: Action, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        async with self._use(session) as env:
            plan = CallPlan.of(type(env))
            kwargs = CallPlan.filter(params or {}, plan.step_params)
            fn = env.step_async if plan.step_async else env.step
            started, clock = time.time(), time.perf_counter()
            obs = _checked(await self._call(session, plan.step_async, fn, action, **kwargs), "step")
            session.step_count += 1
            if session.scorer is not None:
                obs = await self._score(session, env, action, obs)
            payload = observation_payload(obs)
            if self.observers:
                args = (action.model_dump(mode="json"), payload)
                notify(
                    self.observers, "on_step", session.id, *args, started_at=started, clock=clock
                )
            return payload

    async def _score(
        self, session: Session, env: Environment[Any, Any, Any], action: Action, obs: Observation
    ) -> Observation:
        """Apply the environment's rubric to the step that returned ``obs``."""
        assert session.scorer is not None
        on_loop = CallPlan.of(type(env)).step_async
        state = await self._call(
            session, on_loop, _read_state_async if on_loop else _read_state, env
        )
        return await session.scorer.score(action, obs, state, run_sync=session.worker.run)

    async def state(self, session: Session) -> dict[str, Any]:
        async with self._use(session) as env:
            on_loop = CallPlan.of(type(env)).step_async
            state = await self._call(
                session, on_loop, _read_state_async if on_loop else _read_state, env
            )
            shown = _state_dict(state)
            if session.scorer is not None:
                shown["rewards"] = session.scorer.summary()
            return shown

    async def invoke(self, session: Session, name: str, *args: Any) -> Any:
        """Call an optional environment method by name, plain or ``async``.

        Raises AttributeError when the environment has no such method; exceptions raised by the
        method propagate unchanged so the caller can map them.
        """
        async with self._use(session) as env:
            method = getattr(env, name)
            if inspect.iscoroutinefunction(method):
                return await method(*args)
            return await session.worker.run(functools.partial(method, *args))

    async def metadata(self) -> EnvironmentMetadata:
        """The environment's metadata, read once from a temporary instance."""
        if self._metadata is None:
            async with self.ephemeral() as session:
                assert session.env is not None
                meta = await self._call(session, False, session.env.get_metadata)
            if self.env_name:
                meta = meta.model_copy(update={"name": self.env_name})
            self._metadata = meta
        return self._metadata

    # -- MCP tools -------------------------------------------------------------------------

    @property
    def supports_tools(self) -> bool:
        return self._env_cls is not None and issubclass(self._env_cls, MCPEnvironment)

    async def list_tools(self, session: Session) -> list[Tool]:
        async with self._use(session) as env:
            return _as_mcp(env).list_tools()

    async def call_tool(
        self, session: Session, name: str, arguments: dict[str, Any]
    ) -> ToolCallOutcome:
        async with self._use(session) as env:
            mcp = _as_mcp(env)
            if mcp.tool_is_async(name):
                return await mcp.call_tool_async(name, arguments)
            outcome: ToolCallOutcome = await self._call(
                session, False, mcp.call_tool, name, arguments
            )
            return outcome


def _as_mcp(env: Environment[Any, Any, Any]) -> MCPEnvironment:
    if not isinstance(env, MCPEnvironment):
        raise EnvironmentExecutionError("Environment does not support MCP")
    return env


def _checked(obs: Any, method: str) -> Observation:
    if not isinstance(obs, Observation):
        raise EnvironmentExecutionError(
            f"{method}() returned {type(obs).__name__}; it must return an Observation"
        )
    return obs


def _read_state(env: Environment[Any, Any, Any]) -> Any:
    return env.state


async def _read_state_async(env: Environment[Any, Any, Any]) -> Any:
    return env.state


def _state_dict(state: Any) -> dict[str, Any]:
    if hasattr(state, "model_dump"):
        return state.model_dump()  # type: ignore[no-any-return]
    return dict(state) if state else {}
