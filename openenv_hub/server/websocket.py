"""The ``/ws`` and ``/mcp`` WebSocket endpoints: one session per connection.

Each text frame is one request and gets exactly one reply (a ``close`` message gets none).
All environment work goes through :class:`~openenv_hub.server.sessions.SessionPool`.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable

import pydantic_core
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from openenv_hub.errors import (
    EnvironmentExecutionError,
    EnvironmentFactoryError,
    SessionCapacityError,
    SessionError,
)
from openenv_hub.protocol import (
    DecodeError,
    ErrorCode,
    JsonRpcCode,
    ResetRequest,
    decode_message,
    error_frame,
    jsonrpc_error,
    mcp_frame,
    observation_frame,
    state_frame,
    validation_error_frame,
)
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["serve_mcp_socket", "serve_ws"]

logger = logging.getLogger("openenv_hub.server")

#: Close code sent when the server ends a session on its own (idle timeout, shutdown).
CLOSE_GOING_AWAY = 1001

Handler = Callable[[SessionPool, Session, str], Awaitable[bytes | None]]


async def serve_ws(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, _handle_ws_frame, _ws_refusal, attachable=True)


async def serve_mcp_socket(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, _handle_mcp_frame, _mcp_refusal)


async def _serve(
    websocket: WebSocket,
    pool: SessionPool,
    handle: Handler,
    refusal: Callable[[SessionError | SessionCapacityError | EnvironmentFactoryError], bytes],
    *,
    attachable: bool = False,
) -> None:
    await websocket.accept()
    attach_to = websocket.query_params.get("session_id") if attachable else None
    try:
        session = pool.attach(attach_to) if attach_to else await pool.open(kind="ws")
    except (SessionError, SessionCapacityError, EnvironmentFactoryError) as exc:
        await websocket.send_text(refusal(exc).decode())
        await websocket.close(code=1000)
        return

    async def close_socket(reason: str, code: int = CLOSE_GOING_AWAY) -> None:
        if websocket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await websocket.close(code=code, reason=reason[:120])

    session.on_close.append(close_socket)
    try:
        await _receive_loop(websocket, pool, session, handle)
    finally:
        if close_socket in session.on_close:
            session.on_close.remove(close_socket)
        if attach_to:
            await pool.detach(session)
        else:
            await pool.close(session, reason="connection closed")
        await close_socket("session closed", code=1000)


async def _receive_loop(
    websocket: WebSocket, pool: SessionPool, session: Session, handle: Handler
) -> None:
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                frame = error_frame(
                    ErrorCode.SESSION_ERROR,
                    "Binary frames are not supported: send each message as a JSON text frame",
                )
                await websocket.send_text(frame.decode())
                return
            reply = await handle(pool, session, text)
            if reply is None:
                return
            await websocket.send_text(reply.decode())
    except WebSocketDisconnect:
        pass
    except RuntimeError as exc:  # the reaper closed the socket while we waited on it
        if session.ready:
            raise
        logger.debug("Session %s: socket closed by the server: %s", session.id, exc)


async def _handle_ws_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    try:
        message = decode_message(text)
    except DecodeError as exc:
        return exc.frame
    try:
        if message.type == "step":
            try:
                action = pool.parse_action(message.data)
            except ValidationError as exc:
                return validation_error_frame(exc, f"action for {pool.action_cls.__name__}")
            return observation_frame(await pool.step(session, action))
        if message.type == "reset":
            try:
                params = ResetRequest.model_validate(message.data).model_dump(exclude_unset=True)
            except ValidationError as exc:
                return validation_error_frame(exc, "reset arguments")
            return observation_frame(await pool.reset(session, params))
        if message.type == "state":
            return state_frame(await pool.state(session))
        if message.type == "mcp":
            return mcp_frame(await handle_jsonrpc(pool, message.data, bound=session))
        return None  # close
    except EnvironmentExecutionError as exc:
        return error_frame(ErrorCode.EXECUTION_ERROR, exc.message)
    except SessionError as exc:
        return error_frame(ErrorCode.SESSION_ERROR, exc.message)


async def _handle_mcp_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    return pydantic_core.to_json(await handle_jsonrpc(pool, text, bound=session), fallback=str)


def _ws_refusal(exc: SessionError | SessionCapacityError | EnvironmentFactoryError) -> bytes:
    codes = {
        SessionCapacityError: ErrorCode.CAPACITY_REACHED,
        EnvironmentFactoryError: ErrorCode.FACTORY_ERROR,
    }
    code = codes.get(type(exc), ErrorCode.SESSION_ERROR)
    return error_frame(code, exc.message, **exc.data)


def _mcp_refusal(exc: SessionError | SessionCapacityError | EnvironmentFactoryError) -> bytes:
    return pydantic_core.to_json(
        jsonrpc_error(None, JsonRpcCode.SERVER_ERROR, exc.message, exc.data)
    )
