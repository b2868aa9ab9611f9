"""Errors the server answers with, each declaring its codes on every transport, and
:func:`error_from_wire`, which turns a wire error back into its class."""

from __future__ import annotations

from typing import Any, ClassVar

from openenv_hub.errors._base import OpenEnvError

_PACKAGE = "openenv_hub.errors"


class ServerReplyError(OpenEnvError):
    """The server answered a request with an error.

    Each subclass declares, once, how it travels on every transport: ``code`` (OpenEnv's wire
    code, in ``{"type": "error"}`` frames and HTTP bodies), ``reason`` (sent beside the code by
    classes that share one, so the client can rebuild the exact class), ``http_status``,
    ``jsonrpc_code`` and ``title`` (a short summary for people, used by the web UI).
    """

    code: str = "SERVER_ERROR"
    other_codes: ClassVar[tuple[str, ...]] = ()  # further wire codes that mean this class
    reason: ClassVar[str | None] = None
    http_status: ClassVar[int] = 500
    jsonrpc_code: ClassVar[int] = -32603
    title: ClassVar[str] = "The server reported an error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        data: dict[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        if code is not None:
            self.code = code
        self.data = dict(data or {})

    def wire_data(self) -> dict[str, Any]:
        """``code``, ``reason`` (if any) and the structured data, as every transport sends them."""
        data: dict[str, Any] = {"code": self.code, **self.data}
        if self.reason is not None:
            data["reason"] = self.reason
        return data

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        """Rebuild the error from the data of an error frame (``code`` included)."""
        extras = {k: v for k, v in data.items() if k not in ("code", "message", "reason")}
        return cls(message, code=str(data.get("code", cls.code)), data=extras)


class SessionCapacityError(ServerReplyError):
    """Every session slot is taken (``max_sessions``), for sessions and stateless calls alike."""

    code = "CAPACITY_REACHED"
    http_status = 503
    jsonrpc_code = -32000
    title = "The server is at capacity"

    def __init__(self, active_sessions: int, max_sessions: int, *, message: str | None = None):
        self.active_sessions = active_sessions
        self.max_sessions = max_sessions
        super().__init__(
            message
            or (
                f"Server at capacity: {active_sessions}/{max_sessions} sessions active. "
                "Cannot accept new connections."
            ),
            data={"active_sessions": active_sessions, "max_sessions": max_sessions},
            hint="Close a session you no longer use, or retry shortly.",
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(
            _int(data.get("active_sessions")), _int(data.get("max_sessions")), message=message
        )


class EnvironmentFactoryError(ServerReplyError):
    """The environment's factory (its class or function) raised while creating a session."""

    code = "FACTORY_ERROR"
    jsonrpc_code = -32000
    title = "The environment could not be created"

    def __init__(self, factory_name: str, *, message: str | None = None) -> None:
        self.factory_name = factory_name
        super().__init__(
            message or f"Environment factory '{factory_name}' failed to create instance.",
            data={"factory_name": factory_name},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(str(data.get("factory_name", "?")), message=message)


class InvalidMessageError(ServerReplyError):
    """A frame was not JSON, or its ``type`` is unknown (codes INVALID_JSON, UNKNOWN_TYPE)."""

    code = "INVALID_JSON"
    other_codes = ("UNKNOWN_TYPE",)
    http_status = 400
    jsonrpc_code = -32700
    title = "The message could not be read"


class ActionValidationError(ServerReplyError):
    """A message or an action failed validation. ``errors`` is pydantic's error list."""

    code = "VALIDATION_ERROR"
    http_status = 422
    jsonrpc_code = -32602
    title = "Invalid input"

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.data.get("errors", []))


class EnvironmentExecutionError(ServerReplyError):
    """The environment raised inside ``reset``, ``step`` or ``state``."""

    code = "EXECUTION_ERROR"
    title = "The environment raised an error"


class ResetRequiredError(EnvironmentExecutionError):
    """No episode is in progress: the session was never reset, or its episode ended and the
    environment takes no further step. Call ``reset()`` first.

    The server answers every ``step`` and ``state`` before a session's first ``reset`` with it
    (unless the environment sets ``ALLOWS_STEP_BEFORE_RESET``); environments raise it for a step
    after their episode ended. It travels as ``EXECUTION_ERROR`` (what OpenEnv's servers answer
    when an environment raises there), with ``"reason": "reset_required"``.
    """

    reason = "reset_required"
    http_status = 409
    jsonrpc_code = -32600
    title = "Call reset() first"
    hint = "Call reset() to start an episode, then step."


class ModelEngineError(EnvironmentExecutionError):
    """The model engine an environment calls for its agent failed during the step (it could not
    be reached, answered 5xx, or did not answer in time): the step has no result to score.

    An agent harness environment raises it instead of grading a rollout whose model calls did
    not run (the work folder would be scored as the model's work). It travels as
    ``EXECUTION_ERROR`` with ``"reason": "model_engine_failed"``; ``openenv eval`` counts it as
    an infrastructure error (retried, then an error row), never as a wrong answer.
    """

    reason = "model_engine_failed"
    http_status = 502
    title = "The model engine failed"
    hint = "Check that the model engine is up and answering; then run the rollout again."


class ToolCallError(ServerReplyError):
    """An MCP tool call failed: unknown tool, bad arguments, or the tool raised.

    The exception the clients raise (``call_tool``) when a :class:`~openenv_hub.types.ToolError`
    comes back in :attr:`CallToolObservation.error <openenv_hub.types.CallToolObservation>`;
    ``error_type`` is that model's :class:`~openenv_hub.types.ToolErrorType` value.
    """

    code = "TOOL_ERROR"
    title = "The tool call failed"

    def __init__(self, tool_name: str, error_type: str, message: str) -> None:
        self.tool_name = tool_name
        self.error_type = error_type
        super().__init__(
            f"Tool '{tool_name}' failed ({error_type}): {message}",
            data={"tool_name": tool_name, "error_type": error_type},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        error = cls(str(data.get("tool_name", "?")), str(data.get("error_type", "?")), "")
        error.message = message
        error.args = (message,)
        return error


class SessionError(ServerReplyError):
    """The session cannot serve the request (code SESSION_ERROR)."""

    code = "SESSION_ERROR"
    http_status = 409
    jsonrpc_code = -32600
    title = "The session ended"

    def __init__(self, message: str, *, session_id: str | None = None, **kwargs: Any) -> None:
        self.session_id = session_id
        super().__init__(message, **kwargs)

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        extras = {k: v for k, v in data.items() if k not in ("code", "message", "reason")}
        session_id = extras.pop("session_id", None)
        return cls(message, session_id=session_id, data=extras)


class SessionNotFoundError(SessionError):
    """No session with this id on the server (it was closed, reaped, or never existed)."""

    reason = "session_not_found"
    http_status = 404
    jsonrpc_code = -32602

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"Unknown session_id: {session_id}",
            session_id=session_id,
            data={"session_id": session_id},
        )

    @classmethod
    def from_wire(cls, message: str, data: dict[str, Any]) -> ServerReplyError:
        return cls(str(data.get("session_id", "?")))


class SessionClosedError(SessionError):
    """The session was closed (by its client, the reaper or a shutdown) before the call ran."""

    reason = "session_closed"
    http_status = 410


class SessionLostError(SessionError):
    """The connection closed while an episode was in progress; the episode is gone.

    The client has already reconnected: call ``reset()`` to start a new episode.
    """

    reason = "session_lost"


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _reply_classes() -> list[type[ServerReplyError]]:
    """Every :class:`ServerReplyError` class of this package, parents before children."""
    found, pending = [], [ServerReplyError]
    while pending:
        cls = pending.pop(0)
        if cls.__module__.startswith(_PACKAGE):
            found.append(cls)
            pending.extend(cls.__subclasses__())
    return found


def error_from_wire(data: dict[str, Any]) -> ServerReplyError:
    """Build the exception for the ``data`` of a ``{"type": "error"}`` frame (or an HTTP error
    body, or JSON-RPC error data): the class whose ``code`` and ``reason`` match, else the most
    general class with that code."""
    code = str(data.get("code", "SERVER_ERROR"))
    reason = data.get("reason")
    message = str(data.get("message", data.get("detail", "unknown server error")))
    candidates = [c for c in _reply_classes() if code == c.code or code in c.other_codes]
    exact = [c for c in candidates if reason is not None and c.reason == reason]
    general = [c for c in candidates if c.reason is None]
    cls = (exact or general or [ServerReplyError])[0]
    return cls.from_wire(message, {**data, "code": code})
