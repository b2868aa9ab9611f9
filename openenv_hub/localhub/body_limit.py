"""Every request body LocalHub reads has a bound: 413 beyond it, before it is read whole.

Uploads (API commits, ``git push``, and requests to a Space's app) may reach
``max_upload_mb``; they are spooled to disk or streamed on, never held in memory. Every other
body is JSON that a handler reads at once, bounded by :data:`MAX_OTHER_BODY`. A body that says
its size (``Content-Length``) over the bound is refused unread; a chunked one is refused once
it has sent more than the bound, and the handler reading it sees the client gone.

Layer: runtimes.
"""

from __future__ import annotations

import re

from starlette.types import Message, Receive, Scope, Send

from .errors import HubError, error_response
from .git_http import match_git_path
from .proxy import PREFIX as APPS_PREFIX

__all__ = ["MAX_OTHER_BODY", "BodyLimit", "limit_for", "too_large"]

MAX_OTHER_BODY = 16 << 20
_COMMIT = re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+/commit/")


def limit_for(path: str, max_upload_bytes: int) -> int:
    """The largest body a request to ``path`` may send."""
    uploads = path.startswith(APPS_PREFIX) or match_git_path(path) or _COMMIT.match(path)
    return max_upload_bytes if uploads else min(MAX_OTHER_BODY, max_upload_bytes)


def too_large(limit: int) -> HubError:
    """The 413 a body over ``limit`` bytes gets."""
    return HubError(
        413,
        f"Request body over {limit / (1 << 20):g} MB, LocalHub's limit for it. Uploads are "
        "bounded by max_upload_mb (LocalHub(max_upload_mb=...), --max-upload-mb).",
    )


def declared_size(scope: Scope) -> int | None:
    """The request's ``Content-Length``, if it sent one that is a number."""
    for name, value in scope.get("headers", []):
        if name == b"content-length" and value.strip().isdigit():
            return int(value)
    return None


class BodyLimit:
    """Wraps one request's ``receive`` and ``send``: past ``limit`` bytes of body, answers 413
    (unless the response has started), tells the app the client left, and drops what the app
    still sends.

    Attributes:
        refused: Whether the body went over the limit and was answered 413 here.
    """

    def __init__(self, limit: int, scope: Scope, receive: Receive, send: Send) -> None:
        self.limit = limit
        self.refused = False
        self._cut = False
        self._scope = scope
        self._receive = receive
        self._send = send
        self._received = 0
        self._started = False

    async def receive(self) -> Message:
        if self._cut:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self._received += len(message.get("body", b""))
            if self._received > self.limit:
                await self.refuse()
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Message) -> None:
        if self.refused:
            return
        if message["type"] == "http.response.start":
            self._started = True
        await self._send(message)

    async def refuse(self) -> None:
        """Stop reading the body, and answer 413 if nothing was answered yet."""
        self._cut = True
        if self._started or self.refused:
            return
        self.refused = True
        response = error_response(too_large(self.limit))
        response.headers["connection"] = "close"

        async def nothing() -> Message:
            return {"type": "http.disconnect"}

        await response(self._scope, nothing, self._send)
