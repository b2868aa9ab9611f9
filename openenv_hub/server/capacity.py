"""Whether one more session fits: the server's ``max_concurrent_envs``, one client's share, and
the process's open files.

Every WebSocket session holds at least one file descriptor (its socket), so the process's limit
on open files (``ulimit -n``, ``RLIMIT_NOFILE``) caps sessions too, whatever ``max_concurrent_envs``
says. When that limit is what stops a new session, the capacity error says so (and how far it
can be raised), and a server whose ``max_concurrent_envs`` the limit cannot hold warns when it starts.

Layer: server.
"""

from __future__ import annotations

import logging
from typing import Any

import openenv_hub.server.settings as settings
from openenv_hub.errors import ConcurrencyConfigurationError, SessionCapacityError

try:
    import resource
except ImportError:  # pragma: no cover - not on Windows
    resource = None  # type: ignore[assignment]

__all__ = [
    "FILES_KEPT_FOR_SERVER",
    "SessionRoom",
    "check_client_share",
    "open_file_limits",
    "resolve_capacity",
]

logger = logging.getLogger("openenv_hub.server")

#: Descriptors left for the server itself (its listening socket, logs, imported modules, files
#: environments open) when the open-file limit bounds sessions.
FILES_KEPT_FOR_SERVER = 64


def resolve_capacity(env_cls: type[Any] | None, factory_name: str, requested: int | None) -> int:
    """``max_concurrent_envs`` for an environment: as requested (or the setting), and 1 for one
    with ``SUPPORTS_CONCURRENT_SESSIONS = False`` (more than 1 asked of it is refused)."""
    concurrent = getattr(env_cls, "SUPPORTS_CONCURRENT_SESSIONS", True)
    if requested is not None and requested > 1 and not concurrent:
        raise ConcurrencyConfigurationError(factory_name, requested)
    if requested is None and not concurrent:
        return 1
    return settings.max_concurrent_envs(requested)


def check_client_share(client: str | None, held: int, cap: int | None) -> None:
    """Raise :class:`SessionCapacityError` if ``client``, holding ``held`` sessions, may not open
    one more (``cap``: ``max_sessions_per_client``, None for no share of its own)."""
    if client is None or cap is None or held < cap:
        return
    raise SessionCapacityError(
        held,
        cap,
        message=f"Client {client} holds {held} sessions, the most one client may hold "
        f"(max_sessions_per_client={cap} in create_app, or "
        "OPENENV_MAX_SESSIONS_PER_CLIENT). Close one of them first.",
    )


def open_file_limits() -> tuple[int | None, int | None]:
    """The process's (soft, hard) limits on open files; ``None`` where there is none."""
    if resource is None:
        return None, None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    return (None if soft == unlimited else soft), (None if hard == unlimited else hard)


class SessionRoom:
    """Refuses a session beyond ``max_concurrent_envs``, or beyond what the open-file limit allows.

    The limit is read once, when the pool is made (raise it before the server starts).
    """

    def __init__(self, max_concurrent_envs: int, env_name: str) -> None:
        self.soft_files, self.hard_files = open_file_limits()
        self.by_files = (
            None if self.soft_files is None else max(self.soft_files - FILES_KEPT_FOR_SERVER, 1)
        )
        if self.by_files is not None and self.by_files < max_concurrent_envs:
            logger.warning(
                "Environment %r: max_concurrent_envs is %d, but this process may open only %d "
                "files (ulimit -n), so at most about %d sessions can be open at once. %s",
                env_name,
                max_concurrent_envs,
                self.soft_files,
                self.by_files,
                self._raise_hint(),
            )

    def check(self, active_sessions: int, max_sessions: int) -> None:
        """Raise :class:`SessionCapacityError` unless one more session fits."""
        if active_sessions >= max_sessions:
            raise SessionCapacityError(active_sessions, max_sessions)
        if self.by_files is not None and active_sessions >= self.by_files:
            raise SessionCapacityError(
                active_sessions,
                max_sessions,
                message=(
                    f"Server at capacity: {active_sessions} sessions are open and this process "
                    f"may open only {self.soft_files} files (ulimit -n); each session holds at "
                    f"least one. The process's open-file limit, not max_concurrent_envs "
                    f"({max_sessions}), stops new sessions. {self._raise_hint()}"
                ),
            )

    def _raise_hint(self) -> str:
        hard = "no hard limit" if self.hard_files is None else f"hard limit {self.hard_files}"
        return f"Raise it before starting the server (ulimit -n N, up to the {hard})."
