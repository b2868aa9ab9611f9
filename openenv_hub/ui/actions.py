"""What the UI's buttons do, as gradio-free coroutines over the session core.

Each method takes the browser tab's key and returns an :class:`Outcome` describing what to
show. Nothing escapes: validation errors, environment exceptions, a full pool and a lost
session all become an error outcome, so the page never sees a server error.

Layer: ui.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from openenv_hub.errors import ServerReplyError, SessionError
from openenv_hub.protocol import describe_validation_error
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.types import CallToolAction, Tool
from openenv_hub.ui.history import HistoryEntry
from openenv_hub.ui.schema import FieldError
from openenv_hub.ui.tabs import Tab, TabSessions

__all__ = ["Actions", "Outcome", "entry_of"]

logger = logging.getLogger("openenv_hub.ui")

Status = Literal["ok", "error", "info"]


@dataclass
class Outcome:
    """What one button press produced.

    Attributes:
        status: ``"ok"``, ``"error"`` or ``"info"``; picks the banner's colour.
        message: The banner's headline.
        details: Lines under the headline, such as ``"count: Input should be ..."``.
        notice: Said first when the tab's session had to be replaced.
        payload: ``{"observation", "reward", "done"}`` to display, or None to keep the old one.
        state: The episode state to display, or None to keep the old one.
        history_changed: Whether the history table must be redrawn.
        tab: The tab, when one could be found or opened.
        source: Which form was submitted (``"action"`` or ``"tool"``), so its errors can be
            repeated next to its button; empty for the episode controls.
    """

    status: Status
    message: str
    details: list[str] = field(default_factory=list)
    notice: str | None = None
    payload: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    history_changed: bool = False
    tab: Tab | None = None
    source: str = ""


Body = Callable[[Tab, Session], Awaitable[Outcome]]


class Actions:
    """Reset, step, call tools and read state for browser tabs, through the session core."""

    def __init__(self, tabs: TabSessions, *, replay_ignores: frozenset[str] = frozenset()) -> None:
        self.tabs = tabs
        self.pool: SessionPool = tabs.pool
        #: Fields of the observation a fork by replay leaves out of its comparison (timings).
        self.replay_ignores = replay_ignores
        # A tool call is sent as a step when CallToolAction is a valid action of this env.
        self._tools_by_step = issubclass(CallToolAction, self.pool.action_cls)

    def session_line(self, tab: Tab | None) -> str:
        """``Session 1a2b3c4d · 3 steps · 2/64 sessions open`` for the session info line."""
        load = f"{self.pool.active_sessions}/{self.pool.max_concurrent_envs} sessions open"
        session = tab.session if tab is not None else None
        if session is None or not session.ready:
            return f"No session · {load}"
        steps = f"{session.step_count} step{'s' if session.step_count != 1 else ''}"
        return f"Session `{session.id[:8]}` · {steps} · {load}"

    async def open(self, key: str) -> Outcome:
        """Give a newly loaded tab its session."""

        async def body(tab: Tab, session: Session) -> Outcome:
            return Outcome("info", "Connected to a new session. Press Reset to start an episode.")

        return await self.run(key, body)

    async def close(self, key: str) -> None:
        await self.tabs.release(key)

    async def reset(self, key: str, seed: str | None) -> Outcome:
        """Start a new episode; ``seed`` is the seed box's text (empty for no seed)."""
        text = (seed or "").strip()
        if text and not text.lstrip("-").isdigit():
            error = FieldError("seed", f"{text!r} is not a whole number")
            return self._rejected(key, "Invalid seed", [error])
        params: dict[str, Any] = {"seed": int(text)} if text else {}

        async def body(tab: Tab, session: Session) -> Outcome:
            started = time.perf_counter()
            payload = await self.pool.reset(session, params)
            tab.record(entry_of(session, "reset", params, payload, started), new_episode=True)
            return await self.shown(session, "Environment reset.", payload)

        return await self.run(key, body)

    async def step(self, key: str, data: dict[str, Any], errors: list[FieldError]) -> Outcome:
        if errors:  # report the model's complaints about the other fields too
            unreadable = {error.path for error in errors}
            others = [e for e in self._model_errors(data) if e.path.split(".")[0] not in unreadable]
            return self._rejected(key, "Invalid action", errors + others, source="action")

        async def body(tab: Tab, session: Session) -> Outcome:
            action = self.pool.parse_action(data)
            started = time.perf_counter()
            payload = await self.pool.step(session, action)
            sent = action.model_dump(mode="json", exclude={"metadata"})
            tab.record(entry_of(session, "step", sent, payload, started))
            return await self.shown(session, f"Step {session.step_count} done.", payload)

        return await self.run(key, body, source="action")

    async def call_tool(
        self, key: str, name: str, arguments: dict[str, Any], errors: list[FieldError]
    ) -> Outcome:
        if errors:
            message = f"Invalid arguments for tool '{name}'"
            return self._rejected(key, message, errors, source="tool")

        async def body(tab: Tab, session: Session) -> Outcome:
            started = time.perf_counter()
            if self._tools_by_step:
                action = self.pool.parse_action(
                    {"type": "call_tool", "tool_name": name, "arguments": arguments}
                )
                payload = await self.pool.step(session, action)
            else:
                result = await self.pool.call_tool(session, name, arguments)
                error = None if result.error is None else result.error.model_dump(mode="json")
                observation = {"tool_name": name, "result": result.result, "error": error}
                payload = {"observation": observation, "reward": None, "done": False}
            entry = entry_of(session, "tool", arguments, payload, started, tool_name=name)
            tab.record(entry)
            outcome = await self.shown(session, f"Called tool '{name}'.", payload)
            error = payload["observation"].get("error")
            if isinstance(error, dict):
                outcome.status = "error"
                outcome.message = f"Tool '{name}' failed ({error.get('error_type', 'error')})"
                outcome.details = [str(error.get("message", ""))]
            return outcome

        return await self.run(key, body, source="tool")

    async def read_state(self, key: str) -> Outcome:
        async def body(tab: Tab, session: Session) -> Outcome:
            state = await self.pool.state(session)
            return Outcome("ok", "State read.", state=state)

        return await self.run(key, body)

    async def list_tools(self, key: str) -> list[Tool]:
        """The tab's MCP tools (listed once per session); empty when that fails."""
        try:
            tab, session, _ = await self.tabs.acquire(key)
            if tab.tools is None:
                tab.tools = await self.pool.list_tools(session)
        except Exception:
            logger.exception("Could not list the tools of the environment")
            return []
        return tab.tools

    # -- shared plumbing ---------------------------------------------------------------------

    def _model_errors(self, data: dict[str, Any]) -> list[FieldError]:
        try:
            self.pool.parse_action(data)
        except ValidationError as exc:
            return _validation_errors(exc)
        return []

    def _rejected(
        self, key: str, message: str, errors: list[FieldError], *, source: str = ""
    ) -> Outcome:
        """An error outcome for input that never reached the environment."""
        details = [f"{e.path}: {e.message}" for e in errors]
        return Outcome("error", message, details, tab=self.tabs.get(key), source=source)

    async def shown(self, session: Session, message: str, payload: dict[str, Any]) -> Outcome:
        """An ok outcome showing ``payload`` and the state read right after it."""
        try:
            state = await self.pool.state(session)
        except Exception as exc:  # the observation is still worth showing
            state = {"error": f"state could not be read: {exc}"}
        return Outcome("ok", message, payload=payload, state=state, history_changed=True)

    async def run(self, key: str, body: Body, *, source: str = "") -> Outcome:
        """Run ``body`` on the tab's session (opened if it has none); any error it raises
        becomes an error outcome."""
        tab = self.tabs.get(key)
        try:
            tab, session, notice = await self.tabs.acquire(key)
            outcome = await body(tab, session)
            outcome.notice = notice
            if notice:
                outcome.history_changed = True
        except Exception as exc:
            outcome = _error_outcome(exc)
        outcome.tab, outcome.source = tab, source
        return outcome


def entry_of(
    session: Session,
    kind: str,
    action: dict[str, Any],
    payload: dict[str, Any],
    started: float,
    *,
    tool_name: str | None = None,
) -> HistoryEntry:
    return HistoryEntry(
        step=session.step_count,
        kind=kind,
        action=action,
        reward=payload.get("reward"),
        done=bool(payload.get("done")),
        observation=payload.get("observation"),
        timestamp=time.time(),
        duration_ms=(time.perf_counter() - started) * 1000,
        tool_name=tool_name,
    )


def _validation_errors(exc: ValidationError) -> list[FieldError]:
    _, errors = describe_validation_error(exc, "action")
    return [FieldError(".".join(map(str, e["loc"])) or "(action)", e["msg"]) for e in errors]


def _error_outcome(exc: Exception) -> Outcome:
    if isinstance(exc, ValidationError):
        details = [f"{e.path}: {e.message}" for e in _validation_errors(exc)]
        return Outcome("error", "Invalid action", details=details)
    if isinstance(exc, ServerReplyError):  # its class carries the title and the hint
        details = [exc.message]
        if isinstance(exc, SessionError):
            details.append("Press again to continue in a fresh session.")
        elif exc.hint:
            details.append(exc.hint)
        return Outcome("error", exc.title, details=details)
    logger.exception("Web UI action failed")
    return Outcome("error", "Unexpected error", details=[f"{type(exc).__name__}: {exc}"])
