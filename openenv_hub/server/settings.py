"""The server's settings that environment variables can give, each read in one place.

- ``MAX_CONCURRENT_ENVS``: sessions allowed at once (default 64).
- ``OPENENV_STEP_HARD_TIMEOUT_S``: a call stuck on a session's thread this long is abandoned and
  its slot freed (default 600).
- ``OPENENV_MAX_MESSAGE_SIZE_MB``: the largest WebSocket frame and HTTP body accepted (default 16).
- ``OPENENV_SESSION_THREADS``: the threads sessions' synchronous calls run on, each session
  pinned to one (default four per CPU this process may use, from 8 to 32).

An argument passed in code wins over the variable.
"""

from __future__ import annotations

import os

from openenv_hub.errors import ConfigurationError

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE_MB",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_STEP_HARD_TIMEOUT_S",
    "default_session_threads",
    "max_message_size_mb",
    "max_sessions",
    "session_threads",
    "step_hard_timeout_s",
]

DEFAULT_MAX_SESSIONS = 64
DEFAULT_STEP_HARD_TIMEOUT_S = 600.0
DEFAULT_MAX_MESSAGE_SIZE_MB = 16.0


def max_sessions(requested: int | None) -> int:
    return int(
        _setting("max_concurrent_envs", requested, "MAX_CONCURRENT_ENVS", int, DEFAULT_MAX_SESSIONS)
    )


def step_hard_timeout_s(requested: float | None) -> float:
    return _setting(
        "step_hard_timeout_s",
        requested,
        "OPENENV_STEP_HARD_TIMEOUT_S",
        float,
        DEFAULT_STEP_HARD_TIMEOUT_S,
    )


def default_session_threads() -> int:
    """Four threads per CPU this process may run on, at least 8 and at most 32."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(max(4 * (cpus or 1), 8), 32)


def session_threads(requested: int | None) -> int:
    return int(
        _setting(
            "session_threads",
            requested,
            "OPENENV_SESSION_THREADS",
            int,
            default_session_threads(),
        )
    )


def max_message_size_mb(requested: float | None) -> float:
    return _setting(
        "max_message_size_mb",
        requested,
        "OPENENV_MAX_MESSAGE_SIZE_MB",
        float,
        DEFAULT_MAX_MESSAGE_SIZE_MB,
    )


def _setting(
    argument: str,
    requested: float | None,
    variable: str,
    kind: type[int] | type[float],
    default: float,
) -> float:
    if requested is not None:
        if requested <= 0:
            raise ConfigurationError(f"{argument} must be a positive number, got {requested}")
        return requested
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        kind_name = "a whole number" if kind is int else "a number"
        raise ConfigurationError(f"{variable} must be {kind_name}, got {raw!r}") from None
    if value <= 0:
        raise ConfigurationError(f"{variable} must be positive, got {raw!r}")
    return value
