"""The rules of one ``/ws`` connection, without I/O: each end keeps one of these and its transport
(asyncio or threads, websockets or uvicorn) reads and writes the frames it says.

:class:`ServerConnection` is the server's end. Each text frame is one request; requests are
answered one at a time, in the order they came; a client may send up to :data:`MAX_PIPELINED`
requests while an earlier one is being answered, and one more ends the connection (close code
1008). A binary frame is answered with a ``SESSION_ERROR`` and ends it too.

:class:`ClientConnection` is the client's end. Requests go one at a time, each reply is read as
the answer to the request before it, and an episode that a dropped connection took with it is
never silently replaced: ``step``, ``state`` and ``mcp`` raise
:class:`~openenv_hub.errors.SessionLostError` until a ``reset`` starts a new one.

Example (the frames a transport would write and read)::

    >>> end = ClientConnection()
    >>> end.send("reset", {"seed": 1})
    '{"type":"reset","data":{"seed":1}}'
    >>> end.receive('{"type":"observation","data":{"observation":{},"reward":0.0,"done":false}}')
    {'observation': {}, 'reward': 0.0, 'done': False}
    >>> end.connection_lost()  # the socket went: the episode went with it
    >>> end.episode_lost  # so step(), state() and mcp raise SessionLostError until a reset
    True

Layer: core.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pydantic_core

from openenv_hub.errors import SessionError, SessionLostError
from openenv_hub.protocol.codes import CLOSE_POLICY_VIOLATION, MAX_PIPELINED
from openenv_hub.protocol.replies import error_frame_for, reply_data

__all__ = [
    "BINARY_FRAME_REFUSAL",
    "REPLY_TYPES",
    "ClientConnection",
    "PipeliningRefused",
    "ServerConnection",
    "request_frame",
]

#: The reply type of each request (``close`` gets none).
REPLY_TYPES: dict[str, str] = {
    "reset": "observation",
    "step": "observation",
    "state": "state",
    "mcp": "mcp",
}
#: Requests that act on the episode in progress, so they cannot follow a lost one.
_NEED_EPISODE = frozenset({"step", "state", "mcp"})


#: The answer to a binary frame, after which the server ends the connection.
BINARY_FRAME_REFUSAL: bytes = error_frame_for(
    SessionError("Binary frames are not supported: send each message as a JSON text frame")
)


class PipeliningRefused(Exception):
    """A client sent more requests than may wait; the connection ends with ``close_code`` and
    the exception's text as the close reason."""

    close_code = CLOSE_POLICY_VIOLATION


class ServerConnection:
    """The server's end of one connection: which request to answer, and when.

    A transport hands every frame it reads to :meth:`receive`, which returns it when it is to
    be answered now (nothing is being answered), or ``None`` when it waits behind the request
    being answered. Once a request is answered, :meth:`answered` gives the next one waiting
    (``None``: none is, and the next frame is answered as it comes). A request that ends the
    connection (``close``, a binary frame) is answered with ``goes_on=False``: what waits behind
    it is dropped, and later frames are ignored.

    Example::

        >>> end = ServerConnection()
        >>> end.receive('{"type":"step","data":{}}')  # answer it now
        '{"type":"step","data":{}}'
        >>> end.receive('{"type":"state"}') is None  # it waits behind the step
        True
        >>> end.answered()  # the step is answered: the state request is next
        '{"type":"state"}'
        >>> end.answered() is None  # nothing waits: the next frame is answered as it comes
        True
    """

    __slots__ = ("answering", "ended", "max_pipelined", "waiting")

    def __init__(self, *, max_pipelined: int = MAX_PIPELINED) -> None:
        self.max_pipelined = max_pipelined
        self.answering = False  # a request is being answered
        self.ended = False  # a request ended the connection, or the client was refused
        self.waiting: deque[str | bytes] = deque()  # requests behind the one being answered

    def receive(self, frame: str | bytes) -> str | bytes | None:
        """The frame to answer now, or ``None`` (it waits, or the connection has ended).

        Raises:
            PipeliningRefused: more than ``max_pipelined`` requests would wait.
        """
        if self.ended:
            return None
        if not self.answering:
            self.answering = True
            return frame
        if len(self.waiting) >= self.max_pipelined:
            self.ended = True
            self.waiting.clear()
            raise PipeliningRefused(
                f"more than {self.max_pipelined} requests sent without waiting for replies"
            )
        self.waiting.append(frame)
        return None

    def answered(self, *, goes_on: bool = True) -> str | bytes | None:
        """The request being answered is done: the next one to answer, if one waits."""
        if not goes_on:
            self.ended = True
            self.waiting.clear()
        if self.waiting:
            return self.waiting.popleft()
        self.answering = False
        return None


def request_frame(kind: str, data: dict[str, Any] | None = None) -> str:
    """The text frame of a request: ``{"type": kind}``, with ``data`` when given."""
    message: dict[str, Any] = {"type": kind}
    if data is not None:
        message["data"] = data
    return pydantic_core.to_json(message).decode()


class ClientConnection:
    """The client's end of one session over ``/ws``, across the sockets it is carried on.

    A transport calls :meth:`send` for the frame of a request, writes it, reads one frame and
    hands it to :meth:`receive`; when the socket is lost (closed, timed out, or abandoned while
    a reply was owed) it calls :meth:`connection_lost` and opens a new one for the next request.
    """

    def __init__(self) -> None:
        self.episode_active = False  # a reset succeeded on the current socket
        self.episode_lost = False  # the socket dropped mid-episode; a reset clears it
        self.awaiting: str | None = None  # the request whose reply is owed

    def send(self, kind: str, data: dict[str, Any] | None = None) -> str:
        """The frame of request ``kind``, which then owes a reply.

        Raises:
            SessionLostError: ``kind`` acts on an episode that was lost with a socket.
        """
        if self.awaiting is not None:
            raise RuntimeError(
                f"a reply to '{self.awaiting}' is still owed: drop the socket before the next request"
            )
        self.check_not_lost(kind)
        frame = request_frame(kind, data)
        self.awaiting = kind
        return frame

    def receive(self, raw: str | bytes, expect: str | None = None) -> dict[str, Any]:
        """The data of the reply to the request sent (of type ``expect``, by default the one
        :data:`REPLY_TYPES` names).

        Raises:
            ServerReplyError: the server answered with an error (the class its code names), or
                with a frame that is not the expected reply.
        """
        kind, self.awaiting = self.awaiting, None
        if kind is None:
            raise RuntimeError("a frame was received with no request waiting for it")
        data = reply_data(raw, expect or REPLY_TYPES.get(kind, "observation"))
        if kind == "reset":
            self.episode_active, self.episode_lost = True, False
        return data

    def episode_restored(self) -> None:
        """The session was brought to a snapshot (``openenv/session/restore``): an episode is
        in progress, as after a reset."""
        self.episode_active, self.episode_lost = True, False

    def close_frame(self) -> str:
        """The frame that ends the session (it gets no reply); the episode ends with it."""
        self.episode_active, self.awaiting = False, None
        return request_frame("close")

    def connection_lost(self) -> None:
        """The socket is gone; an episode in progress went with it, and no reply is owed."""
        self.awaiting = None
        if self.episode_active:
            self.episode_lost = True
        self.episode_active = False

    def check_not_lost(self, kind: str) -> None:
        """Raise :class:`SessionLostError` if ``kind`` needs the episode that was lost."""
        if kind in _NEED_EPISODE and self.episode_lost:
            raise lost_error()

    def lost_during(self, kind: str) -> SessionLostError | None:
        """The error for a socket found closed while the reply to ``kind`` was owed, when that
        lost the episode ``kind`` needed (else the closure is the error)."""
        return lost_error() if kind in _NEED_EPISODE and self.episode_lost else None


def lost_error() -> SessionLostError:
    """The error of a request that needs an episode a dropped connection took with it."""
    return SessionLostError(
        "The connection to the environment server closed during an episode, and the "
        "episode was lost with it (the server may have restarted or reaped an idle "
        "session). The client has reconnected: call reset() to start a new episode.",
    )
