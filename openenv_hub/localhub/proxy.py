"""A Space's app URL on LocalHub, ``/_localhub/apps/NS/NAME/...``, proxied to its container.

Access is checked as the Hub API checks it, before anything else: a private Space's app answers
only callers who may read the Space, and to everyone else exactly what a missing Space answers
(404 ``RepoNotFound``; a WebSocket handshake is refused with 404), so neither its existence nor
its stage leaks. Callers send their token as the API takes it, ``Authorization: Bearer <token>``,
or as HTTP Basic ``user:token`` (what a client given ``http://user:token@host/...`` sends). A
browser sends neither unprompted, and LocalHub has no login page: private apps are for clients.
A token LocalHub knows is removed before the request reaches the app, so a Space's code never
sees a user's token; other credentials (an app's own API key) pass through.

HTTP requests are forwarded with their method, query, headers and body (streamed), and the
answer is streamed back; ``Forwarded: host=...;proto=...`` (RFC 7239) and ``X-Forwarded-Prefix``
tell the app the address the client used, for an app that builds its own URLs (a Gradio page);
WebSocket connections are relayed frame by frame both ways, close codes included. A Space with
no running app answers 503 (HTTP) or closes with 1013 (WebSocket), saying why: the runtime is
off, or the Space is not running.

Layer: runtimes.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx
from starlette.requests import ClientDisconnect
from starlette.types import Receive, Scope, Send

from .auth import User, token_from_header
from .errors import HubError, error_response
from .routes.deps import open_repo
from .storage import RepoKey

if TYPE_CHECKING:
    from .routes.deps import HubContext

__all__ = [
    "PREFIX",
    "SpaceAppProxy",
    "forward_http",
    "match_app_path",
    "relay_websocket",
    "request_headers",
]

PREFIX = "/_localhub/apps/"
_PATH = re.compile(r"^/_localhub/apps/(?P<ns>[^/]+)/(?P<name>[^/]+)(?P<rest>/.*)?$")
_HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
    "transfer-encoding", "upgrade", "host",
}  # fmt: skip
CLOSE_TRY_AGAIN_LATER = 1013
CLOSE_POLICY_VIOLATION = 1008


def match_app_path(path: str) -> tuple[RepoKey, str] | None:
    """``(Space, path inside its app)`` for an app URL path, else None."""
    found = _PATH.match(path)
    if found is None:
        return None
    return RepoKey("space", found["ns"], found["name"]), found["rest"] or "/"


class SpaceAppProxy:
    """ASGI app forwarding app URLs to the Space runtime's containers."""

    def __init__(self, context: HubContext) -> None:
        self.context = context
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        matched = match_app_path(scope["path"])
        key, rest = matched if matched else (None, "/")
        user, headers = self._caller(scope)
        upstream = self._upstream(key, user)
        if isinstance(upstream, str) and scope["type"] == "http":
            await self._http(upstream, rest, {**scope, "headers": headers}, receive, send)
        elif isinstance(upstream, str):
            await relay_websocket(upstream, rest, scope, receive, send)
        elif scope["type"] == "http":
            await error_response(upstream)(scope, receive, send)
        else:
            await _refuse_websocket(upstream, scope, receive, send)

    def _caller(self, scope: Scope) -> tuple[User | None, list[tuple[bytes, bytes]]]:
        """The LocalHub user whose token the request carries, if any, and the headers to
        forward: without that token."""
        headers = list(scope["headers"])
        for name, value in headers:
            if name == b"authorization":
                token = token_from_header(value.decode("latin-1"))
                user = self.context.tokens.user_for(token) if token else None
                if user is not None:
                    return user, [(n, v) for n, v in headers if n != b"authorization"]
        return None, headers

    def _upstream(self, key: RepoKey | None, user: User | None) -> str | HubError:
        """The app's base URL, or the error that says why there is none."""
        runtime = self.context.spaces
        if key is None:
            return HubError(404, "Not a Space app URL: use /_localhub/apps/NS/NAME/...")
        try:
            open_repo(self.context, key, user, write=False)  # 404 for what the caller may not see
        except HubError as error:
            return error
        if runtime is None:
            return HubError(
                503,
                f"LocalHub does not run Space apps ({key.repo_id}): its Space runtime is off. "
                "Start LocalHub with run_spaces=True (a Docker engine is needed), or start the "
                "app yourself and register its URL with LocalHub.set_space_runtime(repo_id, host=...).",
            )
        if not runtime.enabled:
            return HubError(
                503,
                f"LocalHub cannot run Space apps ({key.repo_id}): it runs them in Docker, and "
                f"{runtime.unavailable}. Start LocalHub where a Docker engine answers, or start "
                "the app yourself and register its URL with LocalHub.set_space_runtime(...).",
            )
        url = runtime.app_url(key)
        if url is None:
            stage = self.context.store.read_meta(key).stage
            return HubError(503, f"Space {key.repo_id} has no running app (stage {stage}).")
        return url

    async def _http(
        self, upstream: str, rest: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(300.0))
        headers = request_headers(scope) + _forwarded(scope)
        await forward_http(self._client, upstream + rest, headers, scope, receive, send)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def _refuse_websocket(error: HubError, scope: Scope, receive: Receive, send: Send) -> None:
    """Refuse a handshake: an app that is not running closes with 1013 ("try again later");
    anything else answers the error's status where the server can send one (else 1008)."""
    await receive()  # websocket.connect
    if error.status == 503:
        await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
    elif "websocket.http.response" in scope.get("extensions", {}):
        response = error_response(error)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()]
        start = {"type": "websocket.http.response.start", "status": error.status}
        await send({**start, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": response.body})
    else:
        await send({"type": "websocket.close", "code": CLOSE_POLICY_VIOLATION})


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    """The request body as it arrives (streamed on, never held whole)."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect()
        yield message.get("body", b"")
        if not message.get("more_body"):
            return


def request_headers(scope: Scope, *, drop: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """The request's end-to-end headers (without hop-by-hop ones, nor those in ``drop``)."""
    return [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in scope["headers"]
        if k.decode("latin-1").lower() not in _HOP_BY_HOP | drop
    ]


async def forward_http(
    client: httpx.AsyncClient,
    url: str,
    headers: list[tuple[str, str]],
    scope: Scope,
    receive: Receive,
    send: Send,
) -> None:
    """Send the request of ``scope`` to ``url`` (its path already in it), its body streamed on
    as it arrives, and stream the answer back; a server that does not answer is a 502."""
    query = scope.get("query_string", b"").decode("latin-1")
    has_body = any(k in (b"content-length", b"transfer-encoding") for k, _ in scope["headers"])
    request = client.build_request(
        scope["method"],
        url + (f"?{query}" if query else ""),
        headers=headers,
        content=_body(receive) if has_body else None,
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
        await send({"type": "http.response.start", "status": response.status_code, "headers": out})
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    finally:
        await response.aclose()


def _forwarded(scope: Scope) -> list[tuple[str, str]]:
    """Where the client sent the request: its host and scheme, and the path of the app's root."""
    matched = match_app_path(scope["path"])
    if matched is None:
        return []
    forwarded = [("x-forwarded-prefix", f"{PREFIX}{matched[0].repo_id}")]
    host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
    if host:
        forwarded.append(("forwarded", f'host="{host}";proto={scope.get("scheme", "http")}'))
    return forwarded


async def relay_websocket(
    upstream: str, rest: str, scope: Scope, receive: Receive, send: Send
) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    await receive()  # websocket.connect
    query = scope.get("query_string", b"").decode("latin-1")
    url = "ws" + upstream.removeprefix("http") + rest + (f"?{query}" if query else "")
    try:
        remote = await connect(
            url, subprotocols=scope.get("subprotocols") or None, max_size=None,
            compression=None, open_timeout=10, ping_interval=None, proxy=None,
        )  # fmt: skip
    except Exception:  # refused, timed out, or not a WebSocket server
        await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
        return
    await send({"type": "websocket.accept", "subprotocol": remote.subprotocol})

    async def to_remote() -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                await remote.close(code=message.get("code", 1000))
                return
            data: Any = (
                message.get("text") if message.get("text") is not None else message.get("bytes")
            )
            with contextlib.suppress(ConnectionClosed):
                await remote.send(data)

    async def to_client() -> None:
        try:
            async for data in remote:
                key = "text" if isinstance(data, str) else "bytes"
                await send({"type": "websocket.send", key: data})
        except ConnectionClosed:
            pass
        code = remote.close_code or 1000
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
