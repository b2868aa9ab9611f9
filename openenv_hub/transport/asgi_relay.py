"""Relaying an ASGI request to a server behind: what LocalHub does for a Space's app and the
local Daytona for a sandbox's preview URL.

:func:`streamed_body` yields an HTTP request's body as it arrives, so that it is passed on
without being held whole.

:func:`pipe_websocket` pipes the frames of an accepted ASGI WebSocket and of a ``websockets``
client connection both ways until either side closes, then closes the other with the code it
was given: a close without a code is passed on as 1000 (a normal close), and a connection that
ended without a close frame (1006, which no close frame may carry) as 1011 (the server behind
failed).

Layer: core.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import Receive, Send

__all__ = ["pipe_websocket", "streamed_body"]

#: Close codes that cannot be sent in a close frame, and what is sent instead.
_SENDABLE_CODES = {1005: 1000, 1006: 1011}


async def streamed_body(receive: Receive) -> AsyncIterator[bytes]:
    """The request body as it arrives (streamed on, never held whole); ``ClientDisconnect``
    when the client goes away before its end."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        yield message.get("body", b"")
        if not message.get("more_body"):
            return


def _no_activity() -> None:
    return None


async def pipe_websocket(
    receive: Receive, send: Send, remote: Any, *, on_frame: Callable[[], None] = _no_activity
) -> None:
    """Pipe the accepted ASGI WebSocket (``receive``/``send``) and ``remote`` (a
    ``websockets.asyncio.client.ClientConnection``) both ways; ``on_frame`` is called for each
    frame either way. Returns when both directions have ended, with ``remote`` closed."""
    from websockets.exceptions import ConnectionClosed

    async def to_remote() -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                await remote.close(code=message.get("code", 1000))
                return
            on_frame()
            text = message.get("text")
            with contextlib.suppress(ConnectionClosed):
                await remote.send(text if text is not None else message.get("bytes"))

    async def to_client() -> None:
        with contextlib.suppress(ConnectionClosed):
            async for data in remote:
                on_frame()
                key = "text" if isinstance(data, str) else "bytes"
                await send({"type": "websocket.send", key: data})
        received = remote.close_code or 1005
        code = _SENDABLE_CODES.get(received, received)
        with contextlib.suppress(Exception):  # the client may be gone already
            await send(
                {"type": "websocket.close", "code": code, "reason": remote.close_reason or ""}
            )

    tasks = [asyncio.ensure_future(to_remote()), asyncio.ensure_future(to_client())]
    _, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(BaseException):
            await task
    await remote.close()
