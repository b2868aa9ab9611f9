"""Every exception openenv-hub raises, in one tree.

```
OpenEnvError
├── DependencyNotInstalledError          an optional extra is missing; the message is the pip line
├── ConfigurationError                   an option or a manifest does not make sense
│   └── ConcurrencyConfigurationError    more than one session for an env that cannot run them
├── ServerReplyError                     the server answered with an error frame  (.code)
│   ├── SessionCapacityError             CAPACITY_REACHED  (.active_sessions, .max_sessions)
│   ├── EnvironmentFactoryError          FACTORY_ERROR     (.factory_name)
│   ├── InvalidMessageError              INVALID_JSON, UNKNOWN_TYPE
│   ├── ActionValidationError            VALIDATION_ERROR  (.errors)
│   ├── EnvironmentExecutionError        EXECUTION_ERROR   (the environment raised)
│   ├── ToolCallError                    a tool call failed (.tool_name, .error_type)
│   └── SessionError                     SESSION_ERROR     (.session_id)
│       ├── SessionNotFoundError         no such session on the server
│       └── SessionLostError             the connection dropped and took an episode with it
└── TransportError                       the connection itself failed  (.url)
    ├── ConnectError                     could not open the connection
    ├── EnvTimeoutError                  no reply in time; the socket was discarded (.timeout_s)
    └── MessageTooLargeError             a frame exceeded a size limit
```

:func:`error_from_wire` is the one place that turns a wire error into one of these classes.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ActionValidationError",
    "ConcurrencyConfigurationError",
    "ConfigurationError",
    "ConnectError",
    "DependencyNotInstalledError",
    "EnvTimeoutError",
    "EnvironmentExecutionError",
    "EnvironmentFactoryError",
    "InvalidMessageError",
    "MessageTooLargeError",
    "OpenEnvError",
    "ServerReplyError",
    "SessionCapacityError",
    "SessionError",
    "SessionLostError",
    "SessionNotFoundError",
    "ToolCallError",
    "TransportError",
    "error_from_wire",
]


class OpenEnvError(Exception):
    """Base class of every error raised by openenv-hub."""


class DependencyNotInstalledError(OpenEnvError, ImportError):
    """An optional dependency is missing. The message says exactly what to install."""

    def __init__(self, package: str, extra: str, *, feature: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{feature} needs the '{package}' package, which is not installed. "
            f'Install it with: pip install "openenv-hub[{extra}]"'
        )


class ConfigurationError(OpenEnvError, ValueError):
    """An option, or a combination of options, that cannot work."""


class ConcurrencyConfigurationError(ConfigurationError):
    def __init__(self, environment_name: str, max_concurrent_envs: int) -> None:
        self.environment_name = environment_name
        self.max_concurrent_envs = max_concurrent_envs
        super().__init__(
            f"Environment '{environment_name}' sets SUPPORTS_CONCURRENT_SESSIONS = False, so it "
            f"cannot run with max_concurrent_envs={max_concurrent_envs}. Use 1, or make the "
            "environment safe to run in several sessions at once and remove the flag."
        )


class ServerReplyError(OpenEnvError):
    """The server answered a request with an error. ``code`` is the wire error code."""

    code: str = "SERVER_ERROR"

    def __init__(
        self, message: str, *, code: str | None = None, data: dict[str, Any] | None = None
    ):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.data = dict(data or {})


class SessionCapacityError(ServerReplyError):
    code = "CAPACITY_REACHED"

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
        )


class EnvironmentFactoryError(ServerReplyError):
    code = "FACTORY_ERROR"

    def __init__(self, factory_name: str, *, message: str | None = None) -> None:
        self.factory_name = factory_name
        super().__init__(
            message or f"Environment factory '{factory_name}' failed to create instance.",
            data={"factory_name": factory_name},
        )


class InvalidMessageError(ServerReplyError):
    """A frame was not JSON, or its ``type`` is unknown (codes INVALID_JSON, UNKNOWN_TYPE)."""

    code = "INVALID_JSON"


class ActionValidationError(ServerReplyError):
    """A message or an action failed validation. ``errors`` is pydantic's error list."""

    code = "VALIDATION_ERROR"

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.data.get("errors", []))


class EnvironmentExecutionError(ServerReplyError):
    """The environment raised inside ``reset``, ``step`` or ``state``."""

    code = "EXECUTION_ERROR"


class ToolCallError(ServerReplyError):
    """An MCP tool call failed: unknown tool, bad arguments, or the tool raised."""

    code = "TOOL_ERROR"

    def __init__(self, tool_name: str, error_type: str, message: str) -> None:
        self.tool_name = tool_name
        self.error_type = error_type
        super().__init__(
            f"Tool '{tool_name}' failed ({error_type}): {message}",
            data={"tool_name": tool_name, "error_type": error_type},
        )


class SessionError(ServerReplyError):
    code = "SESSION_ERROR"

    def __init__(self, message: str, *, session_id: str | None = None, **kwargs: Any) -> None:
        self.session_id = session_id
        super().__init__(message, **kwargs)


class SessionNotFoundError(SessionError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"Unknown session_id: {session_id}", session_id=session_id)


class SessionLostError(SessionError):
    """The connection closed while an episode was in progress; the episode is gone.

    The client has already reconnected: call ``reset()`` to start a new episode.
    """


class TransportError(OpenEnvError, ConnectionError):
    """The connection to the server failed."""

    def __init__(self, message: str, *, url: str | None = None) -> None:
        super().__init__(message)
        self.url = url


class ConnectError(TransportError):
    pass


class EnvTimeoutError(TransportError, TimeoutError):
    """No reply arrived in time. The socket was closed so a late reply can never be misread."""

    def __init__(self, message: str, *, url: str | None = None, timeout_s: float) -> None:
        super().__init__(message, url=url)
        self.timeout_s = timeout_s


class MessageTooLargeError(TransportError):
    pass


_BY_CODE: dict[str, type[ServerReplyError]] = {
    "INVALID_JSON": InvalidMessageError,
    "UNKNOWN_TYPE": InvalidMessageError,
    "VALIDATION_ERROR": ActionValidationError,
    "EXECUTION_ERROR": EnvironmentExecutionError,
    "SESSION_ERROR": SessionError,
}


def error_from_wire(data: dict[str, Any]) -> ServerReplyError:
    """Build the exception for the ``data`` of a ``{"type": "error"}`` frame."""
    code = str(data.get("code", "SERVER_ERROR"))
    message = str(data.get("message", "unknown server error"))
    extras = {k: v for k, v in data.items() if k not in ("code", "message")}
    if code == "CAPACITY_REACHED":
        return SessionCapacityError(
            int(data.get("active_sessions", 0)), int(data.get("max_sessions", 0)), message=message
        )
    if code == "FACTORY_ERROR":
        return EnvironmentFactoryError(str(data.get("factory_name", "?")), message=message)
    cls = _BY_CODE.get(code, ServerReplyError)
    return cls(message, code=code, data=extras)
