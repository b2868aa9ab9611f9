"""Preview URLs: ``/preview/PORT-SANDBOX_ID/...`` of the local Daytona, proxied to the port
inside the sandbox (HTTP and WebSocket), as Daytona serves ``https://PORT-SANDBOX_ID.<proxy>``.

A sandbox that is not public needs its preview token in the ``x-daytona-preview-token`` header
(the token ``get_preview_link`` gives), or the organization's API key as ``Authorization:
Bearer``: without either the answer is 401, with a wrong one 401 too (``Invalid or expired
token``, as Daytona's proxy says); a WebSocket handshake is refused with the same status. Neither
credential is passed on to the sandbox's server, nor is any ``X-Forwarded-*`` header; the
request reaches it with ``Host: 127.0.0.1:PORT``, its own address. A sandbox that is not started
answers 503, a port where nothing listens 502.

Layer: runtimes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
from collections.abc import Callable

import httpcore
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from openenv_hub.transport.asgi_relay import pipe_websocket, streamed_body

from .errors import ApiError, error_response
from .records import SandboxRecord
from .relay import PortClosed, SandboxBackend, open_socket
from .sandboxes import Sandboxes

__all__ = ["PREFIX", "PreviewProxy", "preview_path"]

PREFIX = "/preview/"
TOKEN_HEADER = "x-daytona-preview-token"
_PATH = re.compile(r"^/preview/(?P<port>\d{1,5})-(?P<sandbox>[0-9a-f-]{36})(?P<rest>/.*)?$")
_DROPPED = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
    "transfer-encoding", "upgrade", "host", TOKEN_HEADER, "forwarded",
}  # fmt: skip
_POLICY_VIOLATION = 1008
# Codes a server may not send: none received (1005) is a normal close; a connection lost (1006,
# the sandbox deleted or stopped) is told as an error of the server (1011).
_TIMEOUTS = {"connect": 10.0, "read": 300.0, "write": 300.0, "pool": 30.0}


def preview_path(sandbox_id: str, port: int) -> str:
    """The path of a sandbox's port on the local Daytona."""
    return f"{PREFIX}{port}-{sandbox_id}"


class PreviewProxy:
    """ASGI app forwarding preview URLs to ports inside sandboxes, checking tokens first.

    ``api_key`` is the organization's key, which the proxy also accepts.
    """

    def __init__(self, sandboxes: Sandboxes, api_key: str) -> None:
        self.sandboxes = sandboxes
        self._api_key = api_key
        self._pools: dict[str, httpcore.AsyncConnectionPool] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            record, port, rest = self._target(scope)
        except ApiError as refused:
            await _refuse(refused, scope, receive, send)
            return
        record.touch()
        socket_path = str(self.sandboxes.containers.socket_path(record))
        if scope["type"] == "websocket":
            await _relay_websocket(socket_path, port, rest, scope, receive, send, record.touch)
            return
        pool = self._pools.get(record.id)
        if pool is None:
            backend = SandboxBackend(socket_path)
            pool = self._pools[record.id] = httpcore.AsyncConnectionPool(network_backend=backend)
        headers = _headers(scope, port, api_key=self._api_key)
        await _forward_http(pool, port, rest, headers, scope, receive, send)

    def _target(self, scope: Scope) -> tuple[SandboxRecord, int, str]:
        """The sandbox, the port and the path in it, once the caller may use them.

        Raises:
            ApiError: 404 (no such sandbox or URL), 401 (token), 503 (not started).
        """
        found = _PATH.match(scope["path"])
        if found is None or not 0 < int(found["port"]) < 65536:
            raise ApiError(404, "Not a preview URL: use /preview/PORT-SANDBOX_ID/...")
        record = self.sandboxes.find(found["sandbox"])
        if not record.public:
            self._check(record, dict(scope["headers"]))
        if record.state != "started":
            raise ApiError(503, f"Sandbox {record.id} is {record.state}: start it first.")
        return record, int(found["port"]), found["rest"] or "/"

    def _check(self, record: SandboxRecord, headers: dict[bytes, bytes]) -> None:
        token = headers.get(TOKEN_HEADER.encode(), b"").decode("latin-1")
        bearer = headers.get(b"authorization", b"").decode("latin-1").removeprefix("Bearer ")
        if not token and not bearer:
            raise ApiError.unauthorized(
                f"Sandbox {record.id} is private: send its preview token in the "
                f"'{TOKEN_HEADER}' header (get_preview_link gives it)."
            )
        if (token and hmac.compare_digest(token, record.preview_token)) or (
            bearer and hmac.compare_digest(bearer, self._api_key)
        ):
            return
        raise ApiError.unauthorized("unauthorized: authentication failed: Invalid or expired token")

    def forget(self, sandbox_id: str) -> None:
        """Drop the connections kept to a deleted sandbox."""
        pool = self._pools.pop(sandbox_id, None)
        if pool is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().create_task(pool.aclose())

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            with contextlib.suppress(Exception):
                await pool.aclose()


def _headers(scope: Scope, port: int, *, api_key: str) -> list[tuple[bytes, bytes]]:
    """The request's end-to-end headers for the sandbox's server: no credential of the proxy
    (its token, the API key), no ``X-Forwarded-*``, and its own address as ``Host``."""
    key = f"Bearer {api_key}".encode("latin-1")
    kept = [
        (name, value)
        for name, value in scope["headers"]
        if name.decode("latin-1").lower() not in _DROPPED
        and not name.lower().startswith(b"x-forwarded-")
        and not (name == b"authorization" and hmac.compare_digest(value, key))
    ]
    return [(b"host", f"127.0.0.1:{port}".encode()), *kept]


async def _forward_http(
    pool: httpcore.AsyncConnectionPool, port: int, rest: str, headers: list[tuple[bytes, bytes]],
    scope: Scope, receive: Receive, send: Send,
) -> None:  # fmt: skip
    query = scope.get("query_string", b"").decode("latin-1")
    url = f"http://127.0.0.1:{port}{rest}" + (f"?{query}" if query else "")
    has_body = any(k in (b"content-length", b"transfer-encoding") for k, _ in scope["headers"])
    try:
        async with pool.stream(
            scope["method"], url, headers=headers,
            content=streamed_body(receive) if has_body else None, extensions={"timeout": _TIMEOUTS},
        ) as response:  # fmt: skip
            out = [
                (k, v) for k, v in response.headers if k.decode("latin-1").lower() not in _DROPPED
            ]
            await send({"type": "http.response.start", "status": response.status, "headers": out})
            async for chunk in response.aiter_stream():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
    except ClientDisconnect:
        return
    except httpcore.ConnectError as exc:
        await error_response(ApiError(502, f"Bad gateway: {exc}"))(scope, receive, send)
    except httpcore.TimeoutException:
        await error_response(ApiError(504, "The sandbox's server did not answer in time."))(
            scope, receive, send
        )


async def _relay_websocket(
    socket_path: str, port: int, rest: str, scope: Scope, receive: Receive, send: Send,
    touch: Callable[[], None],
) -> None:  # fmt: skip
    """Relay a WebSocket to the sandbox's server, frame by frame both ways, close codes too."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    await receive()  # websocket.connect
    query = scope.get("query_string", b"").decode("latin-1")
    uri = f"ws://127.0.0.1:{port}{rest}" + (f"?{query}" if query else "")
    try:
        sock = await open_socket(socket_path, port)
        remote = await connect(
            uri, sock=sock, proxy=None, subprotocols=scope.get("subprotocols") or None,
            max_size=None, compression=None, open_timeout=10, ping_interval=None,
        )  # fmt: skip
    except (PortClosed, InvalidStatus, OSError, asyncio.TimeoutError) as exc:
        status = exc.response.status_code if isinstance(exc, InvalidStatus) else 502
        await _refuse(ApiError(status, f"The sandbox's server refused: {exc}"), scope, None, send)
        return
    await send({"type": "websocket.accept", "subprotocol": remote.subprotocol})

    await pipe_websocket(receive, send, remote, on_frame=touch)


async def _refuse(error: ApiError, scope: Scope, receive: Receive | None, send: Send) -> None:
    """Answer ``error``: as HTTP, or as the refused WebSocket handshake's HTTP answer."""
    if scope["type"] == "http":
        assert receive is not None
        await error_response(error)(scope, receive, send)
        return
    if receive is not None:
        await receive()  # websocket.connect
    if "websocket.http.response" in (scope.get("extensions") or {}):
        response = error_response(error)
        start = {"type": "websocket.http.response.start", "status": error.status}
        await send({**start, "headers": response.raw_headers})
        await send({"type": "websocket.http.response.body", "body": response.body})
        return
    await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
