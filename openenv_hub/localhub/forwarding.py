"""Forwarding a request to an app LocalHub serves (a Space's, or a Job's exposed port): HTTP
with its body streamed both ways, and a WebSocket relayed frame by frame, close codes included.

What a caller says about where the request came from (``Forwarded``, ``X-Forwarded-For``,
``X-Forwarded-Host``, ``X-Forwarded-Proto``, ``X-Real-IP``...) is never passed on: LocalHub
says it itself (``X-Forwarded-For`` names the address that connected to LocalHub), so that a
caller cannot pass for another client or name the host the app believes it was asked for.

Layer: runtimes.
"""

from __future__ import annotations

import httpx
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from openenv_hub.transport.asgi_relay import pipe_websocket, streamed_body

from .errors import HubError, error_response

__all__ = [
    "CLOSE_TRY_AGAIN_LATER",
    "forward_http",
    "forwarded_for",
    "relay_websocket",
    "request_headers",
]

_HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
    "transfer-encoding", "upgrade", "host",
}  # fmt: skip
_FORWARDING = {
    "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port",
    "x-forwarded-prefix", "x-forwarded-server", "x-real-ip", "x-original-host",
}  # fmt: skip
CLOSE_TRY_AGAIN_LATER = 1013


def request_headers(scope: Scope, *, drop: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The request's end-to-end headers, without hop-by-hop ones, what the caller says about
    where the request came from, and those in ``drop``; then LocalHub's ``X-Forwarded-For``."""
    left_out = _HOP_BY_HOP | _FORWARDING | drop
    kept = [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in scope["headers"]
        if k.decode("latin-1").lower() not in left_out
    ]
    return kept + forwarded_for(scope)


def forwarded_for(scope: Scope) -> list[tuple[str, str]]:
    """``X-Forwarded-For`` naming the address that connected to LocalHub, if known."""
    client = scope.get("client")
    return [("x-forwarded-for", str(client[0]))] if client else []


async def forward_http(
    client: httpx.AsyncClient,
    url: str,
    headers: list[tuple[str, str]],
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    answer_headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    """Send the request of ``scope`` to ``url`` (its path already in it), its body streamed on
    as it arrives, and stream the answer back with ``answer_headers`` added; a server that does
    not answer is a 502."""
    query = scope.get("query_string", b"").decode("latin-1")
    has_body = any(k in (b"content-length", b"transfer-encoding") for k, _ in scope["headers"])
    request = client.build_request(
        scope["method"],
        url + (f"?{query}" if query else ""),
        headers=headers,
        content=streamed_body(receive) if has_body else None,
    )
    try:
        response = await client.send(request, stream=True)
    except ClientDisconnect:
        return  # the client left, or its body went over LocalHub's limit (answered 413)
    except httpx.HTTPError as exc:
        await error_response(HubError(502, f"The app did not answer: {exc}"))(scope, receive, send)
        return
    try:
        out = [
            (k.encode("latin-1"), v.encode("latin-1"))
            for k, v in response.headers.multi_items()
            if k.lower() not in _HOP_BY_HOP
        ]
        out += answer_headers
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    finally:
        await response.aclose()


async def relay_websocket(
    upstream: str,
    rest: str,
    scope: Scope,
    receive: Receive,
    send: Send,
    *,
    host: str | None = None,
    origin: str | None = None,
) -> None:
    """Relay the WebSocket of ``scope`` to ``upstream + rest``; the handshake names ``host`` as
    its ``Host`` (default: the upstream's) and ``origin`` as its ``Origin`` (default: none)."""
    from urllib.parse import urlsplit

    from websockets.asyncio.client import connect
    from websockets.typing import Origin

    await receive()  # websocket.connect
    query = scope.get("query_string", b"").decode("latin-1")
    target = urlsplit(upstream)
    url = f"ws://{host or target.netloc}{rest}" + (f"?{query}" if query else "")
    try:
        remote = await connect(
            url, subprotocols=scope.get("subprotocols") or None, max_size=None,
            compression=None, open_timeout=10, ping_interval=None, proxy=None,
            origin=Origin(origin) if origin else None, host=target.hostname, port=target.port,
        )  # fmt: skip
    except Exception:  # refused, timed out, or not a WebSocket server
        await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
        return
    await send({"type": "websocket.accept", "subprotocol": remote.subprotocol})

    await pipe_websocket(receive, send, remote)
