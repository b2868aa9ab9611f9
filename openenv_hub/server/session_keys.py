"""Session keys: the capability that addresses a session by name, apart from the id others see.

A session created with ``openenv/session/create`` is addressed afterwards by the key that call
answered (``X-OpenEnv-Session`` on HTTP, ``session_id`` in JSON-RPC, the handshake of a
WebSocket that joins it). The key is 256 random bits, told to that client only, and compared in
constant time. A server of several processes (``serve_app(..., workers=N)``) starts each key
with the index of the process that holds it and a dot (``1.`` then the 256 random bits), so that
any process can pass a request on to the one that holds its session
(:mod:`openenv_hub.server.process_routing`); the index grants nothing. Everything others may see (the Sessions view, the watch stream, logs, observers)
shows the session's display id instead, which grants nothing. A key that names no session and a
key of a session the caller does not hold are the same thing: an unknown key.

Layer: server.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Container
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openenv_hub.server.session import Session

__all__ = ["KEY_BYTES", "MAX_KEY_CHARS", "SessionKeys", "new_display_id", "set_key_prefix"]

KEY_BYTES = 32  # 256 bits
DISPLAY_ID_BYTES = 6  # 12 hex characters: unique among open sessions, short enough to read
MAX_KEY_CHARS = 256  # what a caller may send as a key; longer is no key of ours


class _Prefix:
    """What every key of this process starts with: ``""``, or ``"K."`` in process K of a server
    of several (set once, by that process, as it starts)."""

    value = ""


def set_key_prefix(prefix: str) -> None:
    """Start every key this process issues from now on with ``prefix``."""
    _Prefix.value = prefix


def new_display_id(taken: Container[str]) -> str:
    """A short random id not in ``taken``, for showing a session to others."""
    while True:
        display = secrets.token_hex(DISPLAY_ID_BYTES)
        if display not in taken:
            return display


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()


class SessionKeys:
    """The keys of a pool's addressable sessions. Sessions are found by a digest of the key, so
    the lookup's timing depends on no prefix of a key, then the key is compared in constant
    time."""

    __slots__ = ("_by_digest",)

    def __init__(self) -> None:
        self._by_digest: dict[bytes, Session] = {}

    def issue(self, session: Session) -> str:
        """Give ``session`` a new key and return it (to its creator, and no one else)."""
        key = _Prefix.value + secrets.token_urlsafe(KEY_BYTES)
        session.key = key
        self._by_digest[_digest(key)] = session
        return key

    def find(self, key: object) -> Session | None:
        """The session ``key`` addresses, or None."""
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS:
            return None
        session = self._by_digest.get(_digest(key))
        if session is None or session.key is None:
            return None
        held = session.key.encode("utf-8", "surrogatepass")
        if not hmac.compare_digest(held, key.encode("utf-8", "surrogatepass")):
            return None
        return session

    def forget(self, session: Session) -> None:
        """``session`` closed: its key addresses nothing from now on."""
        if session.key is not None:
            self._by_digest.pop(_digest(session.key), None)

    def __len__(self) -> int:
        return len(self._by_digest)
