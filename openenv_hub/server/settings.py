"""The server's settings that environment variables can give, each read in one place.

- ``MAX_CONCURRENT_ENVS``: sessions allowed at once (default 64).
- ``OPENENV_STEP_HARD_TIMEOUT_S``: a call stuck on a session's thread this long is abandoned and
  its slot freed (default 600).
- ``OPENENV_MAX_MESSAGE_SIZE_MB``: the largest WebSocket frame and HTTP body accepted (default 16;
  read in :mod:`openenv_hub.support.settings`, since runtimes that serve an app in-process need it too).
- ``OPENENV_MAX_SESSIONS_PER_CLIENT``: sessions one client address may hold at once (default:
  no limit of its own).
- ``OPENENV_ALLOWED_ORIGINS``: web origins (``https://app.example.com``, comma-separated; ``*``
  for any) whose pages may call the server besides its own (see
  :mod:`openenv_hub.server.browsers`).
- ``OPENENV_ALLOWED_HOSTS``: host names (comma-separated; ``.example.com`` for that name and
  every name under it; ``*`` for any) a server answers besides the loopback names and its own
  addresses (see :mod:`openenv_hub.server.browsers`).
- ``OPENENV_TRUSTED_PROXIES``: addresses or networks (``10.0.0.0/8``, comma-separated; ``*`` for
  any) of the proxies in front of the server: from them only, ``X-Forwarded-For`` names the
  client (for ``max_sessions_per_client``) and ``X-Forwarded-Host`` / ``Forwarded`` the host
  the page was served from (default: none).
- ``SPACE_HOST`` (or ``SPACE_ID``), set by Hugging Face Spaces: the Space's own origin and host
  are allowed.
- ``OPENENV_SESSION_THREADS``: the threads sessions' synchronous calls run on, each session
  pinned to one (default four per CPU this process may use, from 8 to 32).
- ``ENABLE_WEB_INTERFACE``: mount the web UI at ``/web`` (``create_app(web=None)``).
- ``OPENENV_MODE``: ``simulation`` (default) or ``production`` (``create_app(mode=None)``).
- ``OPENENV_HOST``, ``PORT``: where ``python -m openenv_hub.server`` binds by default.
- ``OPENENV_WATCH`` (earlier ``OPENENV_WATCH_SESSIONS``), ``OPENENV_BIND_HOST``, ``SPACE_ID``:
  the rule of who may watch sessions (:mod:`openenv_hub.server.watch_rule`) reads them from
  :func:`openenv_hub.support.settings.environment` unless given a mapping; ``OPENENV_BIND_HOST`` is
  written only for a server that runs in a child process (``--reload``), or for an app that
  wraps one made by ``create_app``; elsewhere the address is passed to the app.

An argument passed in code wins over the variable.

Layer: server.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Sequence
from urllib.parse import urlsplit

from openenv_hub.errors import ConfigurationError
from openenv_hub.support.settings import (
    DEFAULT_MAX_MESSAGE_SIZE_MB,
    is_true,
    max_message_size_mb,
    named_variable,
    number_setting,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE_MB",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_STEP_HARD_TIMEOUT_S",
    "allowed_hosts",
    "allowed_origins",
    "default_host",
    "default_port",
    "default_session_threads",
    "max_concurrent_envs",
    "max_message_size_mb",
    "max_sessions_per_client",
    "mode",
    "session_threads",
    "space_host",
    "step_hard_timeout_s",
    "trusted_proxies",
    "web_interface",
]

DEFAULT_MAX_SESSIONS = 64
DEFAULT_STEP_HARD_TIMEOUT_S = 600.0


def max_concurrent_envs(requested: int | None) -> int:
    return int(
        number_setting(
            "max_concurrent_envs", requested, "MAX_CONCURRENT_ENVS", int, DEFAULT_MAX_SESSIONS
        )
    )


def step_hard_timeout_s(requested: float | None) -> float:
    return number_setting(
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
        number_setting(
            "session_threads",
            requested,
            "OPENENV_SESSION_THREADS",
            int,
            default_session_threads(),
        )
    )


def max_sessions_per_client(requested: int | None) -> int | None:
    """The sessions one client address may hold at once; None: only ``max_concurrent_envs`` bounds it."""
    if requested is None and not os.environ.get("OPENENV_MAX_SESSIONS_PER_CLIENT", "").strip():
        return None
    return int(
        number_setting(
            "max_sessions_per_client", requested, "OPENENV_MAX_SESSIONS_PER_CLIENT", int, 0
        )
    )


def allowed_origins(requested: Sequence[str] | None) -> tuple[str, ...]:
    """Origins allowed besides the server's own, normalised (``scheme://host[:port]``), or
    ``("*",)`` for any."""
    entries = _listed(requested, "OPENENV_ALLOWED_ORIGINS")
    origins = []
    for entry in entries:
        origin = entry.rstrip("/").lower()
        parts = urlsplit(origin)
        if origin != "*" and (not parts.scheme or not parts.hostname or parts.path):
            raise ConfigurationError(
                f"allowed origin {entry!r} is not an origin: write it as scheme://host[:port], "
                "for example http://localhost:3000 (or * for any)",
            )
        origins.append(origin)
    return tuple(origins)


def allowed_hosts(requested: Sequence[str] | None) -> tuple[str, ...]:
    """Host names a server answers besides the loopback ones and its own addresses (an entry
    ``.example.com``: that name and every name under it), or ``("*",)`` for any."""
    hosts = []
    for entry in _listed(requested, "OPENENV_ALLOWED_HOSTS"):
        host = entry.lower().rstrip(".")
        name = host.removeprefix(".")
        if host != "*" and not _HOST_NAME.fullmatch(name):
            raise ConfigurationError(
                f"allowed host {entry!r} is not a host name: write the name alone, without a "
                "scheme or port, for example my-machine.local (.example.com for every name "
                "under example.com, or * for any)",
            )
        hosts.append(host)
    return tuple(hosts)


def trusted_proxies(requested: Sequence[str] | None) -> tuple[str, ...]:
    """Addresses and networks of the proxies the server trusts to name the client and host, as
    ``ipaddress`` reads them (``10.0.0.0/8``, ``::1``), or ``("*",)`` for any; none by default."""
    proxies = []
    for entry in _listed(requested, "OPENENV_TRUSTED_PROXIES"):
        if entry != "*":
            try:
                entry = str(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ConfigurationError(
                    f"trusted proxy {entry!r} is not an IP address or network: write it as "
                    "10.0.0.5, 10.0.0.0/8 or ::1 (or * for any)",
                ) from None
        proxies.append(entry)
    return tuple(proxies)


def web_interface() -> bool:
    """Whether ``$ENABLE_WEB_INTERFACE`` asks for the web UI."""
    return is_true("ENABLE_WEB_INTERFACE")


def mode() -> str | None:
    """``$OPENENV_MODE``: the server's mode when ``create_app`` is given none."""
    return named_variable("OPENENV_MODE")


def default_host() -> str | None:
    """``$OPENENV_HOST``: the interface ``python -m openenv_hub.server`` binds by default."""
    return named_variable("OPENENV_HOST")


def default_port() -> str | None:
    """``$PORT``: the port ``python -m openenv_hub.server`` binds by default (as given)."""
    return named_variable("PORT")


def space_host() -> str | None:
    """The host a Hugging Face Space is served at (``NS-NAME.hf.space``), when running on one."""
    host = os.environ.get("SPACE_HOST", "").strip().lower()
    if host:
        return host
    space_id = os.environ.get("SPACE_ID", "").strip().lower()
    if "/" not in space_id:
        return None
    return re.sub(r"[^a-z0-9-]", "-", space_id.replace("/", "-")) + ".hf.space"


_HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?|\[[0-9a-f:.]+\]")


def _listed(requested: Sequence[str] | None, variable: str) -> list[str]:
    if requested is not None:
        if isinstance(requested, str):
            raise ConfigurationError(f"pass a list of strings, not the string {requested!r}")
        return [entry.strip() for entry in requested if entry.strip()]
    raw = os.environ.get(variable, "")
    return [entry for entry in re.split(r"[,\s]+", raw) if entry]
