"""The ``/ws`` and ``/mcp`` WebSocket endpoints: one session per connection.

Each text frame is one request and gets exactly one reply (a ``close`` message and a JSON-RPC
notification get none), in the order the requests arrived. All environment work goes through
:class:`~openenv_hub.server.sessions.SessionPool`.

Two tasks serve a connection: one reads frames, one answers them. The reader keeps watching the
socket while a step runs, so a client that vanishes mid-step is noticed at once: the step is
cancelled (an ``async`` one stops; one on the session's thread runs on, holding the session's
slot until it returns or the server's hard time limit passes) and the session is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Final

import pydantic_core
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketState

from openenv_hub.errors import EnvironmentExecutionError, ServerReplyError, SessionError
from openenv_hub.protocol import (
    DecodeError,
    ResetRequest,
    decode_message,
    error_frame_for,
    jsonrpc_error_for,
    mcp_frame,
    observation_frame,
    state_frame,
    validation_error,
)
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["serve_mcp_socket", "serve_ws"]

logger = logging.getLogger("openenv_hub.server")

#: Close code sent when the server ends a session on its own (idle timeout, shutdown).
CLOSE_GOING_AWAY = 1001
#: Close code sent to a client that sends frames it may not (binary) or too many at once.
CLOSE_POLICY_VIOLATION = 1008
#: Requests a client may send before the replies to earlier ones (pipelining).
MAX_PIPELINED = 32

CLOSE: Final = b"close"  # what a handler returns for a close message (no reply)
Handler = Callable[[SessionPool, Session, str], Awaitable[bytes | None]]


async def serve_ws(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, _handle_ws_frame, error_frame_for, attachable=True)


async def serve_mcp_socket(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, _handle_mcp_frame, _mcp_refusal)


async def _serve(
    websocket: WebSocket,
    pool: SessionPool,
    handle: Handler,
    refusal: Callable[[ServerReplyError], bytes],
    *,
    attachable: bool = False,
) -> None:
    await websocket.accept()
    attach_to = websocket.query_params.get("session_id") if attachable else None
    try:
        session = pool.attach(attach_to) if attach_to else await pool.open(kind="ws")
    except ServerReplyError as exc:
        await websocket.send_text(refusal(exc).decode())
        await websocket.close(code=1000)
        return

    async def close_socket(reason: str, code: int = CLOSE_GOING_AWAY) -> None:
        if websocket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await websocket.close(code=code, reason=reason[:120])

    session.on_close.append(close_socket)
    inbox: asyncio.Queue[str | bytes] = asyncio.Queue()
    reading = asyncio.ensure_future(_read(websocket, inbox))
    answering = asyncio.ensure_future(_answer(websocket, pool, session, handle, inbox))
    try:
        await asyncio.wait({reading, answering}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Shielded: if this task is cancelled (a shutdown, a test client), cleanup still runs.
        await asyncio.shield(
            _end(session, pool, (reading, answering), close_socket, detach=bool(attach_to))
        )


async def _end(
    session: Session,
    pool: SessionPool,
    tasks: tuple[asyncio.Task[str | None], asyncio.Task[None]],
    close_socket: Callable[..., Awaitable[None]],
    *,
    detach: bool,
) -> None:
    """Stop both tasks, release the session and close the socket (with 1008 and the reason when
    the reader refused the client, else 1000)."""
    reading = tasks[0]
    for task in tasks:
        task.cancel()
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            _log_failure(session, task.exception())
    if close_socket in session.on_close:
        session.on_close.remove(close_socket)
    if detach:
        await pool.detach(session)
    else:
        await pool.close(session, reason="connection closed")
    refused = _refusal(reading)
    if refused:
        await close_socket(refused, code=CLOSE_POLICY_VIOLATION)
    else:
        await close_socket("session closed", code=1000)


async def _read(websocket: WebSocket, inbox: asyncio.Queue[str | bytes]) -> str | None:
    """Queue each text frame; return when the client disconnects (``None``), or why the
    connection must end (binary frames, too many requests in flight)."""
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        text: str | None = message.get("text")
        if inbox.qsize() >= MAX_PIPELINED:
            return f"more than {MAX_PIPELINED} requests sent without waiting for replies"
        if text is not None:
            inbox.put_nowait(text)
            continue
        inbox.put_nowait(_BINARY)
        await asyncio.Event().wait()  # the answering task replies, then ends the connection


_BINARY: Final = b"binary"


async def _answer(
    websocket: WebSocket,
    pool: SessionPool,
    session: Session,
    handle: Handler,
    inbox: asyncio.Queue[str | bytes],
) -> None:
    """Answer queued requests in order until a close message, a binary frame, or a failure."""
    while True:
        text = await inbox.get()
        if text is _BINARY:
            error = SessionError(
                "Binary frames are not supported: send each message as a JSON text frame"
            )
            await websocket.send_text(error_frame_for(error).decode())
            return
        assert isinstance(text, str)
        reply = await handle(pool, session, text)
        if reply is CLOSE:
            return
        if reply is not None:
            await websocket.send_text(reply.decode())


def _refusal(reading: asyncio.Task[str | None]) -> str | None:
    """Why the reader ended the connection, if it did (not for a disconnect)."""
    if not reading.done() or reading.cancelled() or reading.exception() is not None:
        return None
    return reading.result()


def _log_failure(session: Session, outcome: BaseException | None) -> None:
    if isinstance(outcome, RuntimeError) and not session.ready:
        logger.debug("Session %s: socket closed by the server: %s", session.id, outcome)
        return  # the watchdog or a shutdown closed the socket while we used it
    logger.error("Session %s: WebSocket task failed", session.id, exc_info=outcome)


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
                raise validation_error(exc, f"action for {pool.action_cls.__name__}") from None
            return observation_frame(await pool.step(session, action))
        if message.type == "reset":
            try:
                params = ResetRequest.model_validate(message.data).model_dump(exclude_unset=True)
            except ValidationError as exc:
                raise validation_error(exc, "reset arguments") from None
            return observation_frame(await pool.reset(session, params))
        if message.type == "state":
            return state_frame(await pool.state(session))
        if message.type == "mcp":
            response = await handle_jsonrpc(pool, message.data, bound=session)
            return None if response is None else mcp_frame(response)
        return CLOSE
    except ServerReplyError as exc:
        return error_frame_for(exc)
    except Exception as exc:  # a defect of the server: answer, log, and keep the socket
        logger.exception("Session %s: unexpected failure answering %s", session.id, message.type)
        return error_frame_for(EnvironmentExecutionError(f"Internal server error: {exc!r}"))


async def _handle_mcp_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    response = await handle_jsonrpc(pool, text, bound=session)
    return None if response is None else pydantic_core.to_json(response, fallback=str)


def _mcp_refusal(exc: ServerReplyError) -> bytes:
    return pydantic_core.to_json(jsonrpc_error_for(None, exc))
