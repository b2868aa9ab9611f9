"""The toolkit's settings that environment variables give, outside a server or shared by a server
and the runtimes that serve one (the server's own are in :mod:`openenv_hub.server.settings`),
each read here and nowhere else.

- ``OPENENV_HUB_CACHE``: where openenv-hub keeps what it makes and downloads (uv environments,
  Space files, wheels); default ``$XDG_CACHE_HOME/openenv-hub``, or ``~/.cache/openenv-hub``.
- ``OPENENV_MAX_MESSAGE_SIZE_MB``: the largest WebSocket frame and HTTP body a server accepts
  (default 16): read by the server, and by :mod:`openenv_hub.transport.uvicorn_serving` for the servers that
  runtimes run in-process.
- ``OPENENV_MAX_HEADER_SIZE_KB``: the largest request head (request line and headers) a server
  (an environment's, or LocalHub) reads, in KB (default 64); a larger one is answered 431.
- ``OPENENV_HEADER_TIMEOUT_S``: how long a server waits for a request's head once the connection
  opened or the request's first byte came (default 20); then it answers 408 and closes.

Example:
    >>> import os
    >>> os.environ["OPENENV_HUB_CACHE"] = "/tmp/oh-cache"
    >>> str(cache_dir("wheels"))
    '/tmp/oh-cache/wheels'
    >>> del os.environ["OPENENV_HUB_CACHE"]

Layer: core.
"""

from __future__ import annotations

import os
from pathlib import Path

from openenv_hub.errors import ConfigurationError

__all__ = [
    "DEFAULT_HEADER_TIMEOUT_S",
    "DEFAULT_MAX_HEADER_SIZE_KB",
    "DEFAULT_MAX_MESSAGE_SIZE_MB",
    "cache_dir",
    "header_timeout_s",
    "max_header_size_kb",
    "max_message_size_mb",
    "number_setting",
]

DEFAULT_MAX_MESSAGE_SIZE_MB = 16.0
DEFAULT_MAX_HEADER_SIZE_KB = 64.0
DEFAULT_HEADER_TIMEOUT_S = 20.0


def cache_dir(*parts: str) -> Path:
    """The toolkit's cache folder (``$OPENENV_HUB_CACHE``, else ``$XDG_CACHE_HOME/openenv-hub``,
    else ``~/.cache/openenv-hub``), or the folder ``parts`` inside it. Nothing is created."""
    base = os.environ.get("OPENENV_HUB_CACHE")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(xdg) / "openenv-hub"
    return root.joinpath(*parts)


def max_message_size_mb(requested: float | None) -> float:
    """The largest message a server accepts, in MB: ``requested``, else
    ``$OPENENV_MAX_MESSAGE_SIZE_MB``, else 16."""
    return number_setting(
        "max_message_size_mb",
        requested,
        "OPENENV_MAX_MESSAGE_SIZE_MB",
        float,
        DEFAULT_MAX_MESSAGE_SIZE_MB,
    )


def max_header_size_kb(requested: float | None) -> float:
    """The largest request head a server reads, in KB: ``requested``, else
    ``$OPENENV_MAX_HEADER_SIZE_KB``, else 64."""
    return number_setting(
        "max_header_size_kb",
        requested,
        "OPENENV_MAX_HEADER_SIZE_KB",
        float,
        DEFAULT_MAX_HEADER_SIZE_KB,
    )


def header_timeout_s(requested: float | None) -> float:
    """How long a server waits for a request's head: ``requested``, else
    ``$OPENENV_HEADER_TIMEOUT_S``, else 20."""
    return number_setting(
        "header_timeout_s", requested, "OPENENV_HEADER_TIMEOUT_S", float, DEFAULT_HEADER_TIMEOUT_S
    )


def number_setting(
    argument: str,
    requested: float | None,
    variable: str,
    kind: type[int] | type[float],
    default: float,
) -> float:
    """``requested`` if given, else the variable, else ``default``; a positive ``kind``, or a
    :class:`~openenv_hub.errors.ConfigurationError` naming ``argument`` or ``variable``."""
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
