"""Bounds on HTTP request bodies, before any route reads them.

:class:`RequestBodyLimit` is an ASGI middleware: a body larger than the limit (the same one as
for WebSocket frames) is refused with 413 as soon as its ``Content-Length``, or the bytes
received so far, exceed it, without being read whole. A JSON body must be JSON the wire allows
(:func:`openenv_hub.protocol.parse_json`): ``NaN``, ``Infinity``, numbers that overflow and
unpaired surrogate escapes get 422 naming the problem, never a 500 later on. ``POST /mcp`` is
JSON-RPC, which answers a body that is not JSON itself (-32700, :mod:`openenv_hub.server.mcp`).

Layer: server.
"""

from __future__ import annotations

from typing import Any

import pydantic_core
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openenv_hub.protocol import parse_json

__all__ = ["RequestBodyLimit"]

_UNCHECKED_PREFIXES = ("/web",)  # the UI's own requests (Gradio) are bounded, not parsed
_JSONRPC_PATHS = ("/mcp",)  # bounded here; parsed, and a parse error answered, by JSON-RPC


class RequestBodyLimit:
    """Refuse HTTP bodies over ``max_bytes`` (413) and JSON bodies the wire cannot carry (422)."""

    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _refuse(send, 413, self._too_large(declared))
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await _refuse(send, 413, self._too_large(len(body)))
                return
            if not message.get("more_body", False):
                break
        if _is_json(scope) and body and _parsed_here(scope["path"]):
            try:
                parse_json(bytes(body))
            except ValueError as exc:
                detail = [{"type": "json_invalid", "loc": ["body"], "msg": f"Invalid JSON: {exc}"}]
                await _refuse(send, 422, {"detail": detail})
                return
        await self.app(scope, _replay(bytes(body), receive), send)

    def _too_large(self, size: int) -> dict[str, Any]:
        limit_mb = self.max_bytes / (1024 * 1024)
        return {
            "detail": f"The request body ({size} bytes) is larger than the server's limit of "
            f"{limit_mb:g} MB. Send less, or raise the limit (max_message_size_mb in create_app, "
            "or OPENENV_MAX_MESSAGE_SIZE_MB).",
            "code": "MESSAGE_TOO_LARGE",
        }


def _parsed_here(path: str) -> bool:
    return path not in _JSONRPC_PATHS and not path.startswith(_UNCHECKED_PREFIXES)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _is_json(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return b"json" in value.lower()
    return False


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the buffered body once, then waits on the real one (which then
    reports the client's disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _refuse(send: Send, status: int, content: dict[str, Any]) -> None:
    body = pydantic_core.to_json(content)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
