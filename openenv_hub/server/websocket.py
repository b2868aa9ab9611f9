"""The ``/ws`` and ``/mcp`` WebSocket endpoints: one session per connection.

Each text frame is one request and gets exactly one reply (a ``close`` message and a JSON-RPC
notification get none), in the order the requests arrived. All environment work goes through
:class:`~openenv_hub.server.sessions.SessionPool`.

One task reads a connection's frames and answers each one itself when the answer is ready at
once: an environment that runs on the event loop, for one, takes no other task and no queue. A
request that has to wait (for the session's thread, an ``async`` step, a busy socket) is
finished by a second task, which then answers the requests that arrived meanwhile, while the
reader goes on watching the socket. So a client that vanishes mid-step is noticed at once: the
step is cancelled (an ``async`` one stops; one on the session's thread runs on, holding the
session's slot until it returns or the server's hard time limit passes) and the session is
closed. A client may have up to :data:`MAX_PIPELINED` requests waiting behind the one in
progress; one more and the connection is closed with 1008.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import types
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Final

import pydantic_core
from pydantic import ValidationError
from starlette.websockets import WebSocket, WebSocketState

from openenv_hub.errors import EnvironmentExecutionError, ServerReplyError, SessionError
from openenv_hub.protocol import (
    CloseMessage,
    DecodeError,
    McpMessage,
    ResetMessage,
    ResetRequest,
    StateMessage,
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
#: Requests a client may send while an earlier one is still being answered (pipelining).
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
    connection = _Connection(websocket, pool, session, handle)
    reading = asyncio.ensure_future(connection.read())
    either: list[asyncio.Future[Any]] = [reading, connection.ended]
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    finally:
        # Shielded: if this task is cancelled (a shutdown, a test client), cleanup still runs.
        await asyncio.shield(_end(connection, reading, close_socket, detach=bool(attach_to)))


class _Connection:
    """The requests of one connection, answered in order (see the module's docstring)."""

    def __init__(
        self, websocket: WebSocket, pool: SessionPool, session: Session, handle: Handler
    ) -> None:
        self.websocket, self.pool, self.session, self.handle = websocket, pool, session, handle
        self.waiting: deque[str | bytes] = deque()  # requests behind the one being finished
        self.finishing: asyncio.Task[bool] | None = None  # finishes a request that had to wait
        self.ended: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def read(self) -> str | None:
        """Read frames until the client disconnects (``None``), a request ends the connection
        (``None``), or the client must be refused (why)."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return None
            text: str | None = message.get("text")
            request: str | bytes = _BINARY if text is None else text
            if self.finishing is not None:
                if len(self.waiting) >= MAX_PIPELINED:
                    return f"more than {MAX_PIPELINED} requests sent without waiting for replies"
                self.waiting.append(request)
                continue
            answer = self._answer(request)
            try:
                waits_on = answer.send(None)
            except StopIteration as done:  # answered at once
                if not done.value:
                    return None
                continue
            self.finishing = asyncio.ensure_future(self._finish(_resume(answer, waits_on)))
            self.finishing.add_done_callback(functools.partial(self._finished, answer))

    async def _answer(self, request: str | bytes) -> bool:
        """Answer one request; False when the connection ends with it."""
        if request is _BINARY:
            error = SessionError(
                "Binary frames are not supported: send each message as a JSON text frame"
            )
            await self.websocket.send_text(error_frame_for(error).decode())
            return False
        assert isinstance(request, str)
        reply = await self.handle(self.pool, self.session, request)
        if reply is CLOSE:
            return False
        if reply is not None:
            await self.websocket.send_text(reply.decode())
        return True

    async def _finish(self, answering: Awaitable[bool]) -> bool:
        """Finish the request that had to wait, then those that arrived meanwhile."""
        if not await answering:
            return False
        while self.waiting:
            if not await self._answer(self.waiting.popleft()):
                return False
        self.finishing = None  # the reader answers the next request itself
        return True

    def _finished(self, answer: Coroutine[Any, Any, bool], task: asyncio.Task[bool]) -> None:
        answer.close()  # ended already, unless its task was cancelled before it could resume it
        going_on = not task.cancelled() and task.exception() is None and task.result()
        if not going_on and not self.ended.done():  # a close message, a binary frame, a
            self.ended.set_result(None)  # failure, a cancellation (the hard time limit)


@types.coroutine
def _resume(answer: Coroutine[Any, Any, bool], waits_on: Any) -> Generator[Any, Any, bool]:
    """The rest of ``answer``, a coroutine that ran until its first wait (on ``waits_on``), to
    be awaited in a task: the wait is handed to that task as it was, a cancellation passed on."""
    try:
        yield waits_on
    except BaseException as exc:  # passed on to the coroutine, which decides
        try:
            waits_on = answer.throw(exc)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        return (yield from _resume(answer, waits_on))
    answered: bool = yield from answer
    return answered


async def _end(
    connection: _Connection,
    reading: asyncio.Task[str | None],
    close_socket: Callable[..., Awaitable[None]],
    *,
    detach: bool,
) -> None:
    """Stop reading and answering, release the session and close the socket (with 1008 and the
    reason when the reader refused the client, else 1000)."""
    session, pool = connection.session, connection.pool
    tasks = [task for task in (reading, connection.finishing) if task is not None]
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


_BINARY: Final = b"binary"


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
    action = pool.actions.read_step_frame(text)  # a well-formed step frame, read in one pass
    kind = "step"
    try:
        if action is None:
            message = decode_message(text)
            kind = message.type
            if message.type != "step":
                return await _answer_other(pool, session, message)
            try:
                action = pool.parse_action(message.data)
            except ValidationError as exc:
                raise validation_error(exc, f"action for {pool.action_cls.__name__}") from None
        return observation_frame(await pool.step(session, action))
    except DecodeError as exc:
        return exc.frame
    except ServerReplyError as exc:
        return error_frame_for(exc)
    except Exception as exc:  # a defect of the server: answer, log, and keep the socket
        logger.exception("Session %s: unexpected failure answering %s", session.id, kind)
        return error_frame_for(EnvironmentExecutionError(f"Internal server error: {exc!r}"))


async def _answer_other(
    pool: SessionPool,
    session: Session,
    message: ResetMessage | StateMessage | CloseMessage | McpMessage,
) -> bytes | None:
    """The reply to a ``reset``, ``state``, ``mcp`` or ``close`` message (``CLOSE`` for the
    last); errors are the caller's to word."""
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


async def _handle_mcp_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    response = await handle_jsonrpc(pool, text, bound=session)
    return None if response is None else pydantic_core.to_json(response, fallback=str)


def _mcp_refusal(exc: ServerReplyError) -> bytes:
    return pydantic_core.to_json(jsonrpc_error_for(None, exc))
