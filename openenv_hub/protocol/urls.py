"""Where a server's wire is: the ``/ws`` URL and the HTTP base URL of a server given as
``http(s)://``, ``ws(s)://`` or ``host:port``, and whether it is on this machine.

Example:
    >>> ws_url("http://127.0.0.1:8000")
    'ws://127.0.0.1:8000/ws'
    >>> http_url("wss://example.org/spaces/env/")
    'https://example.org/spaces/env'

Layer: core.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from openenv_hub.errors import ConfigurationError
from openenv_hub.shown_urls import shown

__all__ = ["http_url", "is_loopback", "web_ui_path_hint", "ws_url"]


def ws_url(base_url: str, path: str = "/ws") -> str:
    """The WebSocket URL for a server given as http(s)://, ws(s):// or host:port."""
    url = base_url.strip().rstrip("/")
    if not url:
        raise ConfigurationError("base_url is empty; pass e.g. 'http://127.0.0.1:8000'")
    if "://" not in url:
        url = f"ws://{url}"
    scheme, rest = url.split("://", 1)
    mapped = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(scheme.lower())
    if mapped is None:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} has scheme '{scheme}'; use http, https, ws or wss"
        )
    url = f"{mapped}://{rest}"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} is not a valid URL ({exc}); pass e.g. "
            "'http://127.0.0.1:8000'"
        ) from None
    if not parts.hostname:
        raise ConfigurationError(
            f"base_url {shown(base_url)!r} names no host; pass e.g. 'http://127.0.0.1:8000'"
        )
    if url.endswith(path):
        return url
    return url + path


def http_url(base_url: str) -> str:
    """The HTTP base URL for a server given as http(s)://, ws(s):// or host:port."""
    url = ws_url(base_url).removesuffix("/ws")
    return "http" + url[2:] if url.startswith("ws") else url


def web_ui_path_hint(url: str) -> str:
    """What to say when ``url`` (a base URL, or its ``/ws`` or ``/mcp``) names the web UI's
    path, ``.../web``, where the environment's API is wanted; ``""`` for any other URL.

    Example:
        >>> web_ui_path_hint("http://127.0.0.1:8000/web")
        'Drop /web from the URL: the environment is at http://127.0.0.1:8000 (/web is its web UI).'
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    path = parts.path.rstrip("/")
    for socket in ("/ws", "/mcp"):
        path = path.removesuffix(socket)
    if not path.endswith("/web"):
        return ""
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme.lower(), parts.scheme or "http")
    base = shown(f"{scheme}://{parts.netloc}{path.removesuffix('/web')}")
    return f"Drop /web from the URL: the environment is at {base} (/web is its web UI)."


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (clients reach it without a proxy)."""
    host = urlsplit(url).hostname or ""
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")
