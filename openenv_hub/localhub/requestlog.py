"""An in-memory log of every request LocalHub served, for assertions in tests.

Example:
    >>> log = RequestLog()
    >>> log.record(RequestRecord("GET", "127.0.0.1:8000", "/api/whoami-v2", "", 200, 1.2))
    >>> [entry["path"] for entry in log.entries()]
    ['/api/whoami-v2']

Layer: runtimes.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class RequestRecord:
    """One served request.

    Attributes:
        method: HTTP method.
        host: ``Host`` header sent by the client.
        path: URL path (percent-decoded).
        query: Raw query string.
        status: Response status code.
        duration_ms: Time spent in the app.
        user: Name of the authenticated user, if the token was known.
        error_code: ``X-Error-Code`` of the response, if any.
    """

    method: str
    host: str
    path: str
    query: str
    status: int
    duration_ms: float
    user: str | None = None
    error_code: str | None = None


class RequestLog:
    """Thread-safe, bounded list of :class:`RequestRecord`.

    Args:
        max_entries: Oldest entries are dropped beyond this many.
    """

    def __init__(self, max_entries: int = 10_000) -> None:
        self._entries: list[RequestRecord] = []
        self._max_entries = max_entries
        self._lock = threading.Lock()

    def record(self, entry: RequestRecord) -> None:
        """Append one entry."""
        with self._lock:
            self._entries.append(entry)
            del self._entries[: -self._max_entries]

    def entries(self) -> list[dict[str, Any]]:
        """All entries, oldest first, as JSON-ready dicts."""
        with self._lock:
            return [asdict(entry) for entry in self._entries]

    def clear(self) -> None:
        """Forget all entries."""
        with self._lock:
            self._entries.clear()
