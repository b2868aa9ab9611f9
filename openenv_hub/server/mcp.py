"""JSON-RPC 2.0 for ``/mcp`` (POST and WebSocket) and ``{"type": "mcp"}`` frames on ``/ws``.

Methods: ``tools/list``, ``tools/call``, ``openenv/session/create``, ``openenv/session/close``,
``openenv/session/restore`` (bring the session to a snapshot the server kept, by its id: see
:mod:`openenv_hub.server.snapshots`), ``openenv/session/replay_facts`` (the session's
environment's state digest and why its episode would not replay, for a fork by replay), plus ``initialize`` and ``ping`` so generic MCP clients
can handshake. Notifications (requests
without an ``id``) are carried out and get no reply. Errors are answered with the JSON-RPC code
their exception class declares; anything unexpected with -32603 and the request's id. A batch
(a JSON array of requests, at most :data:`MAX_BATCH`) is answered as JSON-RPC 2.0 says: one
array of the replies, in order, notifications' left out.

Layer: server.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final, overload

from pydantic import ValidationError

from openenv_hub.errors import ServerReplyError
from openenv_hub.protocol import (
    JsonRpcCode,
    JsonRpcRequest,
    jsonrpc_error,
    jsonrpc_error_for,
    jsonrpc_result,
    parse_json,
)
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.types import ToolErrorType

__all__ = ["MAX_BATCH", "handle_jsonrpc", "parse_jsonrpc"]

logger = logging.getLogger("openenv_hub.server")

_PROTOCOL_VERSION = "2025-06-18"
Reply = dict[str, Any]


#: Requests one JSON-RPC batch may hold; a longer batch is refused whole (-32600).
MAX_BATCH: Final = 32


def parse_jsonrpc(raw: str | bytes | dict[str, Any]) -> JsonRpcRequest | Reply:
    """Validate one JSON-RPC request, or return the error reply for it: -32700 for text that is
    not JSON, -32600 for JSON that is not a request (with the request's ``id`` when it has one
    that can be read)."""
    if not isinstance(raw, dict):
        try:
            return _request(parse_json(raw))
        except ValueError as exc:
            return jsonrpc_error(None, JsonRpcCode.PARSE_ERROR, f"Parse error: {exc}")
    return _request(raw)


def _request(value: Any) -> JsonRpcRequest | Reply:
    """``value`` (parsed JSON) as a request, or the -32600 reply that says why it is not one."""
    if not isinstance(value, dict):
        return jsonrpc_error(
            None,
            JsonRpcCode.INVALID_REQUEST,
            f"Invalid request: expected a JSON object (a request), got {_json_type(value)}",
        )
    try:
        return JsonRpcRequest.model_validate(value)
    except ValidationError as exc:
        request_id = value.get("id")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            request_id = None
        return jsonrpc_error(request_id, JsonRpcCode.INVALID_REQUEST, f"Invalid request: {exc}")


def _json_type(value: Any) -> str:
    kinds = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


@overload
async def handle_jsonrpc(
    pool: SessionPool,
    raw: dict[str, Any],
    *,
    bound: Session | None = None,
    client: str | None = None,
) -> Reply | None: ...


@overload
async def handle_jsonrpc(
    pool: SessionPool,
    raw: str | bytes,
    *,
    bound: Session | None = None,
    client: str | None = None,
) -> Reply | list[Reply] | None: ...


async def handle_jsonrpc(
    pool: SessionPool,
    raw: str | bytes | dict[str, Any],
    *,
    bound: Session | None = None,
    client: str | None = None,
) -> Reply | list[Reply] | None:
    """Answer one JSON-RPC request, ``None`` for a notification (a request without ``id``,
    which gets no reply), or a batch of requests (text holding a JSON array): the list of their
    replies in order, notifications' left out, ``None`` when all were notifications. ``bound``
    is the session of the socket the request arrived on; ``client`` the address of who sent it
    (sessions it creates count towards its share)."""
    caller = _Caller(bound, client)
    if isinstance(raw, dict):
        return await _answer(pool, raw, caller)
    try:
        message = parse_json(raw)
    except ValueError as exc:
        return jsonrpc_error(None, JsonRpcCode.PARSE_ERROR, f"Parse error: {exc}")
    if not isinstance(message, list):
        return await _answer(pool, message, caller)
    if not message or len(message) > MAX_BATCH:
        size = f"a batch of {len(message)} requests; one may hold at most {MAX_BATCH}"
        return jsonrpc_error(
            None,
            JsonRpcCode.INVALID_REQUEST,
            f"Invalid request: {size if message else 'an empty batch'}",
        )
    replies = [await _answer(pool, request, caller) for request in message]
    return [reply for reply in replies if reply is not None] or None


async def _answer(pool: SessionPool, message: Any, caller: _Caller) -> Reply | None:
    """The reply to one request (parsed JSON); ``None`` for a notification."""
    request = _request(message)
    if isinstance(request, dict):
        return request
    notification = "id" not in request.model_fields_set
    handler = _METHODS.get(request.method)
    if handler is None:
        if notification:  # e.g. notifications/initialized: nothing to do, nothing to say
            return None
        return jsonrpc_error(
            request.id, JsonRpcCode.METHOD_NOT_FOUND, f"Method not found: {request.method}"
        )
    try:
        reply = jsonrpc_result(request.id, await handler(pool, request.params, caller))
    except _RpcError as exc:
        reply = jsonrpc_error(request.id, exc.code, exc.message, exc.data)
    except ServerReplyError as exc:
        reply = jsonrpc_error_for(request.id, exc)
    except Exception as exc:  # a defect, not the caller's mistake: answer and log it
        logger.exception("JSON-RPC %s failed", request.method)
        reply = jsonrpc_error(
            request.id, JsonRpcCode.INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}"
        )
    return None if notification else reply


@dataclass(frozen=True)
class _Caller:
    """Where a request came from: the socket's session, if any, and the client's address."""

    bound: Session | None
    client: str | None


class _RpcError(Exception):
    def __init__(self, code: JsonRpcCode, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


@asynccontextmanager
async def _target(
    pool: SessionPool, params: dict[str, Any], bound: Session | None
) -> AsyncIterator[Session]:
    """The session a tool request addresses: the socket's, a named one, or a temporary one."""
    if not pool.supports_tools:
        raise _RpcError(JsonRpcCode.INTERNAL_ERROR, "Environment does not support MCP")
    if bound is not None:
        yield bound
    elif params.get("session_id"):
        yield pool.get(str(params["session_id"]))
    else:
        async with pool.ephemeral() as session:
            yield session


async def _tools_list(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    async with _target(pool, params, caller.bound) as session:
        tools = await pool.list_tools(session)
    return {
        "tools": [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in tools
        ]
    }


async def _tools_call(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    name = params.get("name")
    if not isinstance(name, str) or not name:
        raise _RpcError(JsonRpcCode.INVALID_PARAMS, "Missing 'name' in params")
    arguments = params.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise _RpcError(JsonRpcCode.INVALID_PARAMS, "'arguments' must be an object")
    async with _target(pool, params, caller.bound) as session:
        outcome = await pool.call_tool(session, name, arguments)
    if outcome.error is not None:
        code = (
            JsonRpcCode.INVALID_PARAMS
            if outcome.error.error_type
            in (ToolErrorType.TOOL_NOT_FOUND, ToolErrorType.INVALID_ARGS)
            else JsonRpcCode.INTERNAL_ERROR
        )
        raise _RpcError(code, outcome.error.message, {"error_type": outcome.error.error_type.value})
    return outcome.result


async def _session_create(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    """A new session addressed by the key answered, to this caller only; on a socket, the
    socket's own session (bound to it: its display id names it, and grants nothing)."""
    if caller.bound is not None:
        return {"session_id": caller.bound.key or caller.bound.id}
    session = await pool.open("mcp-http", client=caller.client, addressable=True)
    return {"session_id": session.key}


async def _session_close(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    session_id = params.get("session_id")
    if not session_id:
        raise _RpcError(JsonRpcCode.INVALID_PARAMS, "Invalid params - 'session_id' is required")
    bound = caller.bound
    if bound is not None and session_id in (bound.id, bound.key):
        raise _RpcError(
            JsonRpcCode.INVALID_REQUEST,
            "Cannot close active WebSocket-managed session via MCP method",
        )
    session = pool.get(str(session_id))
    if session.attached:  # closed once its WebSocket detaches
        session.close_when_detached = True
        return {"session_id": session_id, "closed": False, "closing": True}
    await pool.close(session, reason="closed by openenv/session/close")
    return {"session_id": session_id, "closed": True}


async def _session_restore(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    """Bring the caller's session (the socket's, or ``session_id``) to the snapshot ``snapshot``
    names; the result is the reply recorded with it."""
    snapshot_id = params.get("snapshot")
    if not isinstance(snapshot_id, str) or not snapshot_id:
        raise _RpcError(
            JsonRpcCode.INVALID_PARAMS, "Invalid params - 'snapshot' (an id) is required"
        )
    session = _callers_session(pool, params, caller, "Restoring")
    payload = await pool.restore(session, snapshot_id)
    if payload is None:
        raise _RpcError(
            JsonRpcCode.INVALID_PARAMS,
            "This server keeps no such snapshot of this environment: another server "
            "took it, it restarted since, or the snapshot was forgotten (it keeps the latest "
            f"{pool.snapshots.limit}). Fork by replay instead.",
        )
    return payload


async def _session_replay_facts(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    """The caller's session's ``state_digest`` and ``replay_refusal`` (each None where the
    environment gives none)."""
    facts = await pool.replay_facts(_callers_session(pool, params, caller, "Replay facts"))
    return {"state_digest": facts.state_digest, "replay_refusal": facts.replay_refusal}


def _callers_session(
    pool: SessionPool, params: dict[str, Any], caller: _Caller, what: str
) -> Session:
    """The socket's session, or the one ``session_id`` names."""
    if caller.bound is not None:
        return caller.bound
    if params.get("session_id"):
        return pool.get(str(params["session_id"]))
    raise _RpcError(
        JsonRpcCode.INVALID_PARAMS,
        f"{what} needs a session: send it on /ws, or name one with 'session_id'",
    )


async def _initialize(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    meta = await pool.metadata()
    return {
        "protocolVersion": params.get("protocolVersion", _PROTOCOL_VERSION),
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": meta.name, "version": meta.version or "0"},
    }


async def _ping(pool: SessionPool, params: dict[str, Any], caller: _Caller) -> Any:
    return {}


_METHODS: dict[str, Callable[[SessionPool, dict[str, Any], _Caller], Awaitable[Any]]] = {
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "openenv/session/create": _session_create,
    "openenv/session/close": _session_close,
    "openenv/session/restore": _session_restore,
    "openenv/session/replay_facts": _session_replay_facts,
    "initialize": _initialize,
    "ping": _ping,
}
