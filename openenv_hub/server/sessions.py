"""The session core: the one place where environments are created, driven and closed.

HTTP routes, the ``/ws`` socket, ``/mcp`` and the web UI are thin adapters over
:class:`SessionPool`: they translate requests into its calls and its results and errors
(:class:`~openenv_hub.errors.ServerReplyError` subclasses) into replies. Slots, threads, closing
and the watchdog live in :mod:`openenv_hub.server.lifecycle`; this module drives environments:
validates actions, picks the keyword arguments each method accepts, runs synchronous methods on
the session's thread and ``async`` ones on the event loop, and shapes what they return.

Layer: server.
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import time
from collections.abc import Callable
from typing import Any

from openenv_hub.environment import Environment
from openenv_hub.episode_rules import (
    checked_observation,
    needs_reset,
    reset_required,
)
from openenv_hub.errors import EnvironmentExecutionError, ServerReplyError
from openenv_hub.protocol import observation_payload
from openenv_hub.protocol.actions import ActionReader
from openenv_hub.rubrics.ranges import wire_range
from openenv_hub.server.callback_steps import CallbackSteps
from openenv_hub.server.calls import CallPlan, environment_failed
from openenv_hub.server.lifecycle import (
    DEFAULT_IDLE_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_STEP_HARD_TIMEOUT_S,
    EPHEMERAL,
    EnvFactory,
)
from openenv_hub.server.observers import notify, wants_snapshots
from openenv_hub.server.session import Session
from openenv_hub.server.snapshots import (
    KeptSnapshot,
    SnapshotStore,
    can_snapshot,
    read_replay_facts,
    restore_scorer,
    says_replay_facts,
    scorer_progress,
)
from openenv_hub.tools import MCPEnvironment, ToolCallOutcome
from openenv_hub.types import (
    Action,
    CallToolAction,
    EnvironmentMetadata,
    ListToolsAction,
    Observation,
    ReplayFacts,
    Tool,
)

__all__ = [
    "DEFAULT_IDLE_TIMEOUT_S",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_STEP_HARD_TIMEOUT_S",
    "EnvFactory",
    "Session",
    "SessionPool",
]

logger = logging.getLogger("openenv_hub.server")


class SessionPool(CallbackSteps):
    """Creates, drives, reaps and closes environment sessions (see :class:`SessionLifecycle`
    for the arguments; :class:`CallbackSteps` for steps no coroutine waits for)."""

    _metadata: EnvironmentMetadata | None = None
    _snapshot_failed = False  # logged once
    _facts_failed = False  # logged once

    async def _call(
        self,
        session: Session,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        on_loop: bool = False,
    ) -> Any:
        """Call an environment method: awaited on the loop, or on the session's thread.

        Exceptions other than the server's own become :class:`EnvironmentExecutionError`.
        """
        try:
            if on_loop:
                return await fn(*args, **(kwargs or {}))
            return await self.run_sync(session, functools.partial(fn, *args, **(kwargs or {})))
        except ServerReplyError:
            raise
        except Exception as exc:
            raise environment_failed(session.id, fn, exc) from exc

    @functools.cached_property
    def takes_tool_calls(self) -> bool:
        """Whether a step may also be an MCP tool call (``list_tools``, ``call_tool``)."""
        return self.supports_tools or self.action_cls in (Action, CallToolAction, ListToolsAction)

    @functools.cached_property
    def actions(self) -> ActionReader:
        """How this pool's actions are read off the wire (tool calls too, where they may be)."""
        return ActionReader(self.action_cls, tool_calls=self.takes_tool_calls)

    def parse_action(self, data: dict[str, Any]) -> Action:
        """Validate a step payload against the action class (raises pydantic ValidationError).

        Environments whose action class is the base ``Action`` or an MCP action, and MCP
        environments with actions of their own, also accept ``{"type": "list_tools"}`` and
        ``{"type": "call_tool", ...}``.
        """
        return self.actions.parse(data)

    async def reset(self, session: Session, params: dict[str, Any]) -> dict[str, Any]:
        async with self.use(session) as env:
            started, clock = _clock(self.observers)
            obs = await self._reset(session, env, params)
            payload = observation_payload(self._in_range(session, obs))
            if self.observers:
                await self._tell(session, env, "on_reset", params, payload, started, clock)
            return payload

    async def _reset(
        self, session: Session, env: Environment[Any, Any, Any], params: dict[str, Any]
    ) -> Observation:
        plan = CallPlan.of(type(env))
        kwargs = plan.reset.keywords(params)
        fn = env.reset_async if plan.reset_async else env.reset
        obs = await self._call(session, fn, (), kwargs, on_loop=plan.reset_async)
        session.step_count = 0
        session.episode_started = True
        if session.scorer is not None:
            session.scorer.reset()
        return checked_observation(obs, "reset")

    async def step(
        self, session: Session, action: Action, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        async with self.use(session) as env:
            await self._episode_for(session, env, "step", action)
            plan = CallPlan.of(type(env))
            kwargs = plan.step.keywords(params) if params else {}
            fn = env.step_async if plan.step_async else env.step
            started, clock = _clock(self.observers)
            obs = await self._call(session, fn, (action,), kwargs, on_loop=plan.step_async)
            obs = checked_observation(obs, "step")
            session.step_count += 1
            if session.scorer is not None:
                obs = await self._score(session, env, action, obs)
            payload = observation_payload(self._in_range(session, obs))
            if self.observers:
                sent = action.model_dump(mode="json")
                await self._tell(session, env, "on_step", sent, payload, started, clock)
            return payload

    async def _tell(
        self,
        session: Session,
        env: Environment[Any, Any, Any],
        event: str,
        sent: dict[str, Any],
        payload: dict[str, Any],
        started: float,
        clock: float,
    ) -> None:
        """Tell the observers of a reset or step, with the id of a snapshot taken after it when
        one of them wants it."""
        duration_s = time.perf_counter() - clock
        snapshot = facts = None
        if wants_snapshots(self.observers):
            if can_snapshot(env):
                snapshot = await self._keep_snapshot(session, env, payload)
            facts = await self._replay_facts(session, env, after_reset=event == "on_reset")
        notify(
            self.observers, event, session.id, sent, payload,
            started_at=started, duration_s=duration_s, snapshot=snapshot, replay=facts,
        )  # fmt: skip

    async def _keep_snapshot(
        self, session: Session, env: Environment[Any, Any, Any], payload: dict[str, Any]
    ) -> str | None:
        """Snapshot ``env`` on its session's thread and keep it; None if it failed (logged)."""
        try:
            state = await self.run_sync(session, env.snapshot)
        except Exception:
            if not self._snapshot_failed:  # once: it would fail at every step
                self._snapshot_failed = True
                logger.exception("%s.snapshot() failed; forks replay", type(env).__name__)
            return None
        progress = scorer_progress(session.scorer)
        kept = KeptSnapshot(type(env), state, payload, session.step_count, progress)
        return self.snapshots.add(kept)

    async def replay_facts(self, session: Session) -> ReplayFacts:
        """What ``session``'s environment says of replaying its episode now: its state digest
        and why its episode would not replay exactly (None: it would, or it does not say)."""
        async with self.use(session) as env:
            return await self._replay_facts(session, env, after_reset=True) or ReplayFacts()

    async def _replay_facts(
        self, session: Session, env: Environment[Any, Any, Any], *, after_reset: bool
    ) -> ReplayFacts | None:
        """:meth:`replay_facts` on the session's thread (the refusal only ``after_reset``);
        None where the environment says nothing, or failed to (logged once)."""
        if not says_replay_facts(env):
            return None
        read = functools.partial(read_replay_facts, env, after_reset)
        try:
            facts: ReplayFacts = await self.run_sync(session, read)
        except Exception:
            if not self._facts_failed:
                self._facts_failed = True
                logger.exception("%s.state_digest() or replay_refusal() failed", type(env).__name__)
            return None
        return facts

    @functools.cached_property
    def snapshots(self) -> SnapshotStore:
        """The snapshots this server kept (see :mod:`openenv_hub.server.snapshots`)."""
        return SnapshotStore()

    async def restore(self, session: Session, snapshot_id: Any) -> dict[str, Any] | None:
        """Bring ``session`` to the kept snapshot ``snapshot_id`` and return the reply recorded
        with it; None when this server keeps no such snapshot of this environment."""
        kept = self.snapshots.get(snapshot_id)
        async with self.use(session) as env:
            if kept is None or type(env) is not kept.env_type:
                return None
            await self._call(session, env.restore, (kept.state,))
            session.step_count, session.episode_started = kept.step_count, True
            restore_scorer(session.scorer, kept.scorer)
            payload = copy.deepcopy(kept.payload)
            if self.observers:
                notify(self.observers, "on_restore", session.id, kept.step_count, payload)
            return payload

    async def _score(
        self, session: Session, env: Environment[Any, Any, Any], action: Action, obs: Observation
    ) -> Observation:
        """Apply the environment's rubric to the step that returned ``obs``. Its synchronous
        scoring functions run where the environment's steps run: on the session's thread, or
        inline for environments that step on the event loop."""
        assert session.scorer is not None
        state = await self._read_state(session, env)
        on_thread = session.worker is not None and not CallPlan.of(type(env)).step_async
        runner = (lambda fn: self.run_sync(session, fn)) if on_thread else None
        return await session.scorer.score(action, obs, state, run_sync=runner)

    async def _read_state(self, session: Session, env: Environment[Any, Any, Any]) -> Any:
        on_loop = CallPlan.of(type(env)).step_async
        read = _read_state_async if on_loop else _read_state
        return await self._call(session, read, (env,), on_loop=on_loop)

    async def state(self, session: Session) -> dict[str, Any]:
        async with self.use(session) as env:
            await self._episode_for(session, env, "state")
            shown = _state_dict(await self._read_state(session, env))
            if session.scorer is not None:
                shown["rewards"] = session.scorer.summary()
            return shown

    async def invoke(self, session: Session, name: str, *args: Any) -> Any:
        """Call an optional environment method by name, plain or ``async``.

        Raises AttributeError when the environment has no such method; exceptions raised by the
        method propagate unchanged so the caller can map them.
        """
        async with self.use(session) as env:
            method = getattr(env, name)
            if inspect.iscoroutinefunction(method):
                return await method(*args)
            return await self.run_sync(session, functools.partial(method, *args))

    async def metadata(self) -> EnvironmentMetadata:
        """The environment's metadata, read once from a temporary instance."""
        if self._metadata is None:
            async with self.ephemeral() as session, self.use(session) as env:
                meta = await self._call(session, env.get_metadata)
            update: dict[str, Any] = {"reward_range": wire_range(session.reward_range)}
            if self.env_name:
                update["name"] = self.env_name
            self._metadata = meta.model_copy(update=update)
        return self._metadata

    # -- the reset rule (openenv_hub.episode_rules) -----------------------------------------

    async def _episode_for(
        self,
        session: Session,
        env: Environment[Any, Any, Any],
        method: str,
        action: Action | None = None,
    ) -> None:
        """Refuse a step or state before the session's first reset; a stateless call's fresh
        environment has its episode started here instead (observers are not told: it is no
        episode of the client's)."""
        if not needs_reset(env, session.episode_started, action):
            return
        if session.kind != EPHEMERAL:
            raise reset_required(method, session.id)
        await self._reset(session, env, {})

    # -- MCP tools -------------------------------------------------------------------------

    @functools.cached_property
    def supports_tools(self) -> bool:
        return self.env_cls is not None and issubclass(self.env_cls, MCPEnvironment)

    async def list_tools(self, session: Session) -> list[Tool]:
        async with self.use(session) as env:
            return _as_mcp(env).list_tools()

    async def call_tool(
        self, session: Session, name: str, arguments: dict[str, Any]
    ) -> ToolCallOutcome:
        async with self.use(session) as env:
            mcp = _as_mcp(env)
            is_async = mcp.tool_is_async(name)
            call = mcp.call_tool_async if is_async else mcp.call_tool
            outcome: ToolCallOutcome = await self._call(
                session, call, (name, arguments), on_loop=is_async
            )
            return outcome


def _clock(observers: list[Any]) -> tuple[float, float]:
    """When a call starts (wall clock, performance counter), read only if observers want it."""
    return (time.time(), time.perf_counter()) if observers else (0.0, 0.0)


def _as_mcp(env: Environment[Any, Any, Any]) -> MCPEnvironment:
    if not isinstance(env, MCPEnvironment):
        raise EnvironmentExecutionError("Environment does not support MCP")
    return env


def _read_state(env: Environment[Any, Any, Any]) -> Any:
    return env.state


async def _read_state_async(env: Environment[Any, Any, Any]) -> Any:
    return env.state


def _state_dict(state: Any) -> dict[str, Any]:
    if hasattr(state, "model_dump"):
        return state.model_dump()  # type: ignore[no-any-return]
    return dict(state) if state else {}
