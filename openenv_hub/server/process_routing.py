"""In a server of several processes (:mod:`openenv_hub.server.processes`), a request reaches the
process that holds the session it names, whichever process accepted its connection.

A session's key starts with the index of the process that holds it (``2.`` then its 256 random
bits, :mod:`openenv_hub.server.session_keys`). :class:`ProcessRouter` wraps each process's app
and looks for a key where the server reads one: the ``X-OpenEnv-Session`` header (HTTP, and the
handshake of a WebSocket that joins a session), a WebSocket's ``session_id`` query parameter,
and ``params.session_id`` of a JSON-RPC ``POST /mcp``. A key of another process's session is
passed on to that process over its private Unix socket (HTTP request and answer streamed, a
WebSocket piped frame by frame); everything else is served here. Only the index is read here:
the key itself is checked by the process that holds it, in constant time, as always; a key with
a made-up index reaches a process that knows no such key and is answered as an unknown key.

The web UI (Gradio keeps its state in the process that serves it) is served by process 0.

The process that serves a passed-on request sees the client's address, not the Unix socket's:
the passing process sends it in ``X-OpenEnv-Relayed-Client``, which is read only from the
private socket (a client that sends it over TCP changes nothing). Every answer carries
``X-OpenEnv-Worker: K/N``, the process that gave it.

Layer: server.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from openenv_hub.transport.asgi_relay import pipe_websocket, streamed_body

__all__ = ["RELAYED_CLIENT_HEADER", "WORKER_HEADER", "ProcessRouter", "owner_of"]

WORKER_HEADER = "X-OpenEnv-Worker"
RELAYED_CLIENT_HEADER = "X-OpenEnv-Relayed-Client"
_SESSION_HEADER = b"x-openenv-session"
_RELAYED = RELAYED_CLIENT_HEADER.lower().encode()
_HOP_BY_HOP = {
    b"connection", b"keep-alive", b"proxy-authenticate", b"proxy-authorization", b"te",
    b"trailer", b"transfer-encoding", b"upgrade",
}  # fmt: skip
_WEBSOCKET_OWN = {b"host", b"sec-websocket-key", b"sec-websocket-version",
                  b"sec-websocket-extensions", b"sec-websocket-accept"}  # fmt: skip
#: How long a passed-on HTTP request may take, the answer included (the serving process bounds
#: a step by its own limits; this bounds the wait of the passing process).
RELAY_TIMEOUT_S = 900.0
#: The largest ``POST /mcp`` body read to find its session (a larger one is served here, where
#: the app's own body limit answers it).
MAX_ROUTED_BODY = 1024 * 1024
UI_PROCESS = 0
UI_PATH = "/web"  # where create_app mounts the web UI (openenv_hub.ui.mount.UI_PATH)


def owner_of(key: str, count: int) -> int | None:
    """The process a key names (``K.`` at its start, K below ``count``), or None."""
    prefix, dot, _ = key.partition(".")
    if not dot or not 0 < len(prefix) <= 3 or not (prefix.isascii() and prefix.isdigit()):
        return None
    index = int(prefix)
    return index if index < count else None


class ProcessRouter:
    """The ASGI app of process ``index``: ``app``, with requests for other processes' sessions
    passed on to them (``paths``: every process's private socket, by index)."""

    def __init__(self, app: ASGIApp, *, index: int, paths: list[str]) -> None:
        self.app, self.index, self.paths = app, index, paths
        self.worker = f"{index}/{len(paths)}".encode()
        self._clients: dict[int, Any] = {}  # httpx clients by process, made on first use

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if scope.get("server") == (self.paths[self.index], None):  # passed on by another
            await self.app(_with_relayed_client(scope), receive, self._marked(send))
            return
        target = self._target(scope)
        if target is None and scope["type"] == "http" and scope["path"] == "/mcp":
            body = await _read_body(receive)
            target = _owner_in_jsonrpc(body, len(self.paths))
            receive = _replay(body, receive)
        if target is None or target == self.index:
            await self.app(scope, receive, self._marked(send))
        elif scope["type"] == "websocket":
            await self._relay_websocket(target, scope, receive, send)
        else:
            await self._relay_http(target, scope, receive, send)

    def _target(self, scope: Scope) -> int | None:
        """The process a request belongs to, from its header, query or path (None: any)."""
        if (scope["path"] + "/").startswith(UI_PATH + "/"):
            return UI_PROCESS
        for name, value in scope["headers"]:
            if name == _SESSION_HEADER:
                return owner_of(value.decode("latin-1"), len(self.paths))
        if scope["type"] == "websocket" and b"session_id=" in scope.get("query_string", b""):
            query = parse_qs(scope["query_string"].decode("latin-1"))
            for key in query.get("session_id", [])[:1]:
                return owner_of(key, len(self.paths))
        return None

    def _marked(self, send: Send) -> Send:
        async def marked(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.accept"):
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"x-openenv-worker", self.worker)]}  # fmt: skip
            await send(message)

        return marked

    def _client(self, target: int) -> Any:
        import httpx

        client = self._clients.get(target)
        if client is None:
            transport = httpx.AsyncHTTPTransport(uds=self.paths[target])
            timeout = httpx.Timeout(RELAY_TIMEOUT_S, connect=10.0)
            client = httpx.AsyncClient(transport=transport, timeout=timeout)
            self._clients[target] = client
        return client

    async def _relay_http(self, target: int, scope: Scope, receive: Receive, send: Send) -> None:
        import httpx

        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP and k != _RELAYED]
        headers.append((_RELAYED, _client_text(scope).encode()))
        path = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string", b"")
        url = "http://process" + path.decode("latin-1") + ("?" + query.decode() if query else "")
        client = self._client(target)
        request = client.build_request(
            scope["method"], url, headers=headers, content=streamed_body(receive)
        )
        try:
            answer = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            await _answer_unreachable(send, target, exc)
            return
        try:
            kept = [(k, v) for k, v in answer.headers.raw if k.lower() not in _HOP_BY_HOP]
            await send({"type": "http.response.start", "status": answer.status_code,
                        "headers": kept})  # fmt: skip
            async for chunk in answer.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await answer.aclose()

    async def _relay_websocket(
        self, target: int, scope: Scope, receive: Receive, send: Send
    ) -> None:
        from websockets.asyncio.client import unix_connect

        if (await receive())["type"] != "websocket.connect":
            return
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]
                   if k not in _HOP_BY_HOP and k not in _WEBSOCKET_OWN and k != _RELAYED]  # fmt: skip
        headers.append((RELAYED_CLIENT_HEADER, _client_text(scope)))
        host = dict(scope["headers"]).get(b"host", b"process").decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        uri = f"ws://{host}{scope['path']}" + (f"?{query}" if query else "")
        try:
            remote = await unix_connect(
                self.paths[target], uri, additional_headers=headers, max_size=None,
                compression=None, open_timeout=10, user_agent_header=None,
            )  # fmt: skip
        except Exception:  # the process is gone or refused: the client is told, not the reason
            await send({"type": "websocket.close", "code": 1011})
            return
        await send({"type": "websocket.accept", "headers": [(b"x-openenv-worker",
                    f"{target}/{len(self.paths)}".encode())]})  # fmt: skip
        await pipe_websocket(receive, send, remote)


def _client_text(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else ""


def _with_relayed_client(scope: Scope) -> Scope:
    """``scope`` with the client the passing process named (it came over the private socket)."""
    for name, value in scope["headers"]:
        if name == _RELAYED:
            host, _, port = value.decode("latin-1").rpartition(":")
            if host and port.isdigit():
                return {**scope, "client": (host, int(port))}
    return scope


async def _read_body(receive: Receive) -> list[Message]:
    """The request's first messages, up to :data:`MAX_ROUTED_BODY` bytes or its end."""
    read: list[Message] = []
    size = 0
    while size <= MAX_ROUTED_BODY:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request" or not message.get("more_body"):
            break
        size += len(message.get("body", b""))
    return read


def _owner_in_jsonrpc(read: list[Message], count: int) -> int | None:
    """The process named by ``params.session_id`` of a whole JSON-RPC body (the first request
    of a batch that names one), or None."""
    if not read or read[-1].get("more_body") or read[-1]["type"] != "http.request":
        return None
    body = b"".join(m.get("body", b"") for m in read)
    if b"session_id" not in body:
        return None
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        parsed = json.loads(body)
        for request in parsed if isinstance(parsed, list) else [parsed]:
            params = request.get("params") if isinstance(request, dict) else None
            key = params.get("session_id") if isinstance(params, dict) else None
            if isinstance(key, str):
                return owner_of(key, count)
    return None


def _replay(read: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives ``read`` again, then what ``receive`` gives."""
    pending = list(read)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


async def _answer_unreachable(send: Send, target: int, exc: Exception) -> None:
    body = json.dumps(
        {"detail": f"the server process {target} that holds this session does not answer "
                   f"({type(exc).__name__}); the session may be gone: create a new one"}
    ).encode()  # fmt: skip
    await send({"type": "http.response.start", "status": 502,
                "headers": [(b"content-type", b"application/json")]})  # fmt: skip
    await send({"type": "http.response.body", "body": b"" + body})
