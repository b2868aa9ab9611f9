"""The ``/ws`` and ``/mcp`` WebSocket endpoints: one session per connection.

A thin adapter: starlette's socket carries the frames, the protocol's
:class:`~openenv_hub.protocol.connection.ServerConnection` says which request to answer and
when (one at a time, in order, up to :data:`~openenv_hub.protocol.codes.MAX_PIPELINED` waiting),
and :class:`~openenv_hub.server.sessions.SessionPool` does the environment's work.

The task that reads a connection's frames answers the one next in line itself: a request whose
answer is ready at once takes no other task and no queue. A step of a session whose calls run
on its thread is started there and answered from a callback when it returns, and one of an
environment that runs on the event loop is answered there and then (:meth:`SessionPool.start_step
<openenv_hub.server.callback_steps.CallbackSteps.start_step>`): no coroutine waits for either,
and the reader goes on reading. Other answers that have to wait (an ``async`` step, a
rubric, a busy socket) are finished by the task that began them while a new task takes over
reading, as soon as the event loop runs. Either way a client that vanishes mid-step is noticed
at once: the session is closed (an ``async`` step is cancelled; one on the session's thread
runs on, holding the session's slot until it returns or the server's hard time limit passes).
Replies go out in the order the requests came. One request too many waiting, and the
connection is closed with 1008.

Under the servers of :mod:`openenv_hub.transport.uvicorn_serving` the frames do not go through ASGI at all
(:mod:`openenv_hub.transport.websocket_frames`): the connection takes them from the transport, each message
arrives by a callback (:meth:`_Connection.message`) and each reply is written at once, so a
step on a thread costs no task and no coroutine resumed from end to end. While the client
reads replies more slowly than they are written, the next request waits for it.

Layer: server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from starlette.websockets import WebSocket, WebSocketState

from openenv_hub.errors import ServerReplyError
from openenv_hub.protocol import (
    CLOSE_GOING_AWAY,
    CLOSE_NORMAL,
    error_frame_for,
    observation_frame,
)
from openenv_hub.protocol.connection import (
    BINARY_FRAME_REFUSAL,
    PipeliningRefused,
    ServerConnection,
)
from openenv_hub.server.http import SESSION_HEADER
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.server.ws_replies import (
    CLOSE,
    Handler,
    answer_mcp_frame,
    answer_ws_frame,
    mcp_refusal,
)
from openenv_hub.transport.websocket_frames import EXTENSION, FrameChannel

__all__ = ["serve_mcp_socket", "serve_ws"]

logger = logging.getLogger("openenv_hub.server")


async def serve_ws(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, answer_ws_frame, error_frame_for, attachable=True)


async def serve_mcp_socket(websocket: WebSocket, pool: SessionPool) -> None:
    await _serve(websocket, pool, answer_mcp_frame, mcp_refusal)


async def _serve(
    websocket: WebSocket,
    pool: SessionPool,
    handle: Handler,
    refusal: Callable[[ServerReplyError], bytes],
    *,
    attachable: bool = False,
) -> None:
    await websocket.accept()
    # A session created over HTTP is joined by its key: the handshake's header (kept out of
    # URLs and access logs), or the ``session_id`` query parameter OpenEnv's clients send.
    attach_to = None
    if attachable:
        attach_to = websocket.headers.get(SESSION_HEADER) or websocket.query_params.get(
            "session_id"
        )
    try:
        client = websocket.client.host if websocket.client else None
        session = pool.attach(attach_to) if attach_to else await pool.open("ws", client=client)
    except ServerReplyError as exc:
        await websocket.send_text(refusal(exc).decode())
        await websocket.close(code=CLOSE_NORMAL)
        return

    async def close_socket(reason: str, code: int = CLOSE_GOING_AWAY) -> None:
        if websocket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await websocket.close(code=code, reason=reason[:120])

    session.on_close.append(close_socket)
    connection = _Connection(websocket, pool, session, handle, steps_at_once=attachable)
    try:
        await connection.run((websocket.scope.get("extensions") or {}).get(EXTENSION))
    finally:
        # Shielded: if this task is cancelled (a shutdown, a test client), cleanup still runs.
        await asyncio.shield(_close(connection, close_socket, detach=bool(attach_to)))


class _Connection:
    """One connection's reading and answering (see the module's docstring)."""

    __slots__ = (
        "channel", "ended", "handle", "held", "loop", "over", "pool", "reader", "refusal",
        "rules", "sending", "session", "steps_at_once", "tasks", "websocket", "writes_paused",
    )  # fmt: skip

    def __init__(
        self,
        websocket: WebSocket,
        pool: SessionPool,
        session: Session,
        handle: Handler,
        *,
        steps_at_once: bool = False,
    ) -> None:
        self.websocket, self.pool, self.session, self.handle = websocket, pool, session, handle
        self.steps_at_once = steps_at_once  # /ws: steps on a thread are answered from a callback
        self.sending: asyncio.Task[None] | None = None  # a reply waiting for the socket
        self.rules = ServerConnection()
        self.loop = asyncio.get_running_loop()
        self.tasks: set[asyncio.Task[None]] = set()  # reading, answering, or both
        self.reader: asyncio.Task[None] | None = None  # the one task reading the socket
        self.ended: asyncio.Future[None] = self.loop.create_future()
        self.over = False  # ``ended`` is done (read on every request: no future to touch)
        self.refusal: str | None = None  # why the client was refused, if it was
        self.channel: FrameChannel | None = None  # the socket's frames, when taken from ASGI
        self.writes_paused = False  # the client reads more slowly than replies are written
        self.held: str | bytes | None = None  # the request next in line, while writes pause

    async def run(self, frames: dict[str, Any] | None = None) -> None:
        """Read and answer until the connection ends: from the frames the server hands over
        (``frames``, see :mod:`openenv_hub.transport.websocket_frames`), else from ASGI's messages."""
        if frames is not None:
            self.channel = frames["channel"]
            frames["take"](self)
        else:
            self._read_in_new_task()
        await self.ended

    def message(self, frame: str | bytes) -> bool:
        """A message from the client, handed over by the server (the frames were taken). When
        a task begins answering it, the server holds the next frames until the event loop has
        run that task once, as the reader of ASGI's messages would: a burst of requests
        answered at once is then answered as it comes, not queued and refused."""
        if self.over:
            return True
        if self._answer_next(self._in_line(frame)) or self.channel is None:
            return True
        self.loop.call_soon(self.channel.resume_reading)
        return False

    def closed(self, code: int) -> None:
        """The client closed the connection, or it was lost (the frames were taken)."""
        self.end()

    def writing_paused(self, paused: bool) -> None:
        """The client fell behind in reading replies, or caught up (the frames were taken):
        the request next in line waits meanwhile, and those after it wait at
        :attr:`rules`, which closes the connection with 1008 should too many."""
        self.writes_paused = paused
        if not paused:
            request, self.held = self.held, None
            self._answer_next(request)

    def _answer_next(self, request: str | bytes | None) -> bool:
        """Answer ``request``, the one next in line, when the frames were taken; ``False`` when
        a task began answering it."""
        if request is None or self.over:
            return True
        if self.writes_paused:
            self.held = request
            return True
        if self._step_started(request):
            return True
        self._start(self._answer_in_order(request, reading=False))
        return False

    def _read_in_new_task(self) -> None:
        if self.over:
            return
        self.reader = self.loop.create_task(self._read())
        self.tasks.add(self.reader)
        self.reader.add_done_callback(self._task_done)

    async def _read(self) -> None:
        """Read frames, answering each that is next in line, until the client disconnects, the
        connection ends, or another task took over reading while this one answered."""
        while True:
            message = await self.websocket.receive()
            if message["type"] == "websocket.disconnect":
                return self.end()
            text: str | None = message.get("text")
            frame: str | bytes = text if text is not None else message.get("bytes") or b""
            request = self._in_line(frame)
            if self.over:  # the client was refused
                return
            if request is None or self._step_started(request):  # it waits, or is on its way
                continue
            await self._answer_in_order(request)
            if self.reader is not asyncio.current_task():
                return

    def _in_line(self, frame: str | bytes) -> str | bytes | None:
        """``frame`` put in line (:attr:`rules`): the request to answer now, or ``None`` when
        it waits or the client was refused (with more than it may pipeline: the end)."""
        try:
            return self.rules.receive(frame)
        except PipeliningRefused as refused:
            self.refusal = str(refused)
            self.end()
            return None

    def _step_started(self, request: str | bytes) -> bool:
        """Whether ``request`` is a step now running on the session's thread, to be answered
        by :meth:`_step_answered` (see :meth:`SessionPool.start_step`)."""
        if not (
            self.steps_at_once
            and isinstance(request, str)
            and self.pool.may_start_step(self.session)  # else the frame is read once, later
        ):
            return False
        action = self.pool.actions.read_step_frame(request)
        return action is not None and self.pool.start_step(
            self.session, action, self._step_answered
        )

    def _step_answered(
        self, payload: dict[str, Any] | None, error: ServerReplyError | None
    ) -> None:
        """Send the reply to a step started by :meth:`_step_started`, then answer what waits."""
        if self.over:
            return
        if error is not None:
            frame = error_frame_for(error)
        else:
            assert payload is not None
            frame = observation_frame(payload)
        if self.channel is not None:
            self.channel.send_text(frame)
            self._answer_next(self.rules.answered())
            return
        self.sending = self._start(self._send(frame, after=self.sending))
        request = self.rules.answered()
        if request is not None and not self._step_started(request):
            self._start(self._answer_in_order(request, reading=False))

    def _start(self, answering: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = self.loop.create_task(answering)
        self.tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    async def _send(self, frame: bytes, *, after: asyncio.Task[None] | None) -> None:
        """Send a reply once the one before it, ``after``, has gone: a reply to a step answered
        from a callback is sent by a task of its own (:attr:`sending`), which a slow socket
        may hold up. With the frames taken, a reply is written at once, as every reply is."""
        if self.channel is not None:
            self.channel.send_text(frame)
            return
        if after is not None and not after.done():
            await asyncio.wait([after])
        await self.websocket.send_text(frame.decode())

    async def _answer_in_order(self, request: str | bytes | None, *, reading: bool = True) -> None:
        """Answer ``request``, then those that arrived meanwhile. Should an answer wait, the
        event loop runs and starts a new reader (unless this task is not the reader); one
        answered at once costs no task."""
        hand_over = self.loop.call_soon(self._read_in_new_task) if reading else None
        try:
            while request is not None:
                if isinstance(request, bytes):
                    await self._send(BINARY_FRAME_REFUSAL, after=self.sending)
                    goes_on = False
                else:
                    reply = await self.handle(self.pool, self.session, request)
                    goes_on = reply is not CLOSE
                    if goes_on and reply is not None:
                        await self._send(reply, after=self.sending)
                request = self.rules.answered(goes_on=goes_on)
                if not goes_on:
                    self.end()
                elif self.channel is not None:
                    self._answer_next(request)  # it may wait, or start on a thread
                    return
        finally:
            if hand_over is not None:
                hand_over.cancel()

    def _task_done(self, task: asyncio.Task[None]) -> None:
        """A reader or answerer ended: if it failed or was cancelled (the hard time limit), so
        does the connection."""
        self.tasks.discard(task)
        if task.cancelled():
            self.end()
        elif task.exception() is not None:
            _log_failure(self.session, task.exception())
            self.end()

    def end(self) -> None:
        """The connection is over (``run`` returns)."""
        if not self.over:
            self.over = True
            self.ended.set_result(None)


async def _close(
    connection: _Connection, close_socket: Callable[..., Awaitable[None]], *, detach: bool
) -> None:
    """Stop reading and answering, release the session and close the socket (with 1008 and the
    reason when the client was refused, else 1000)."""
    session, pool = connection.session, connection.pool
    connection.end()
    tasks = list(connection.tasks)
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks)
    if close_socket in session.on_close:
        session.on_close.remove(close_socket)
    if detach:
        await pool.detach(session)
    else:
        await pool.close(session, reason="connection closed")
    if connection.refusal:
        await close_socket(connection.refusal, code=PipeliningRefused.close_code)
    else:
        await close_socket("session closed", code=CLOSE_NORMAL)


def _log_failure(session: Session, outcome: BaseException | None) -> None:
    if isinstance(outcome, RuntimeError) and not session.ready:
        logger.debug("Session %s: socket closed by the server: %s", session.id, outcome)
        return  # the watchdog or a shutdown closed the socket while we used it
    logger.error("Session %s: WebSocket task failed", session.id, exc_info=outcome)
