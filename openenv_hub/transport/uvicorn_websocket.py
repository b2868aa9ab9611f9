"""The WebSocket protocol the servers of :mod:`openenv_hub.transport.uvicorn_serving` run under uvicorn.

uvicorn's sans-I/O protocol, with the handshake, keepalive pings, the ASGI messages and
shutdown left to it, but the frames a client sends after the handshake read here: in one pass
over the bytes received, unmasked by ``websockets``' compiled routine, with no parser
generator, frame object or event list per frame. Each whole message goes to the ASGI queue as
before or, once an endpoint took the frames (:mod:`openenv_hub.transport.websocket_frames`),
straight to it, and its replies straight to the socket: no queue, no task woken, no
``pause_reading``/``resume_reading`` per message. When writes outrun the client the endpoint
is told (``writing_paused``), and answers nothing more until the transport's buffer drains,
so a client that sends without reading holds at most that buffer and the requests it may
pipeline; its pings, meanwhile, are answered once it reads, the latest only (RFC 6455, 5.5.3).

What a client sends is refused as ``websockets``' own reading refuses it, with the same close
code at the same frame (``tests/server/test_ws_reader_differential.py`` holds the two readers
to that): a message is bounded in bytes (``ws_max_size``, counted from each frame's header, so
a frame announced past what is left of it is refused unread) and in frames
(:data:`MAX_FRAGMENTS`), so that a message sent in millions of empty fragments is closed with
1009 rather than held.

A connection that agreed on an extension (``permessage-deflate``, when the server was started
with ``ws_per_message_deflate=True``; :func:`~openenv_hub.transport.uvicorn_serving.uvicorn_options` turns it off)
keeps uvicorn's own reading.

Layer: core.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import EXTERNAL_CLOSE_CODES, Frame, Opcode
from websockets.http11 import Request

from openenv_hub.transport.websocket_frames import EXTENSION, FrameListener

if TYPE_CHECKING:
    from uvicorn._types import WebSocketReceiveEvent

try:
    from websockets.speedups import apply_mask  # compiled; pure Python below where it is not
except ImportError:  # pragma: no cover - websockets without its C extension
    from websockets.utils import apply_mask

__all__ = ["WebSocketProtocol"]

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
OPCODES: Final = frozenset((CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG))
#: Frames one message may come in, as ``websockets`` allows when it assembles messages itself.
MAX_FRAGMENTS: Final = 4096
PROTOCOL_ERROR: Final = 1002
INVALID_DATA: Final = 1007
TOO_BIG: Final = 1009
NO_STATUS: Final = 1005


def server_frame(opcode: int, payload: bytes) -> bytes:
    """One final frame as a server sends it (unmasked)."""
    size = len(payload)
    if size < 126:
        return bytes((0x80 | opcode, size)) + payload
    if size < 1 << 16:
        return bytes((0x80 | opcode, 126)) + size.to_bytes(2, "big") + payload
    return bytes((0x80 | opcode, 127)) + size.to_bytes(8, "big") + payload


class WebSocketProtocol(WebSocketsSansIOProtocol):
    """See the module's docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reads_frames = False  # after the handshake: this class reads the frames
        self.unread = bytearray()  # the start of a frame not yet whole
        self.fragments: list[bytes] | None = None  # a message coming in pieces
        self.fragments_opcode = TEXT
        self.fragments_size = 0  # its bytes so far (0 when no message is in pieces)
        self.max_fragments = MAX_FRAGMENTS
        self.pending_pong: bytes | None = None  # a ping's payload, answered once writes drain
        self.listener: FrameListener | None = None
        self.reading_held = False  # the listener asked to hold the next messages
        self.failed = False  # closed for what the client sent: the rest is not read

    # -- the handshake: offer the endpoint the frames

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope = getattr(self, "scope", None)
        if scope is None or "Sec-WebSocket-Extensions" in self.response.headers:
            return  # refused, or an extension agreed: uvicorn's reading
        self.reads_frames = True
        scope["extensions"][EXTENSION] = {"take": self.take_frames, "channel": self}

    def take_frames(self, listener: FrameListener) -> None:
        """From now on, messages go to ``listener``; those already queued go first."""
        self.listener = listener
        if not self.writable.is_set():
            listener.writing_paused(True)
        read_on = True
        while not self.queue.empty():
            message = self.queue.get_nowait()
            if message["type"] == "websocket.receive":
                text = message.get("text")
                data = text if text is not None else message.get("bytes") or b""
                read_on = listener.message(data) and read_on
            elif message["type"] == "websocket.disconnect":
                listener.closed(message.get("code", 1006))
        self.reading_held = not read_on
        if self.read_paused:  # uvicorn's: a message waited for the app
            self.read_paused = False
            if read_on:
                self.transport.resume_reading()
        elif not read_on:
            self.transport.pause_reading()

    def send_text(self, payload: bytes) -> None:
        if not (self.close_sent or self.disconnected or self.transport.is_closing()):
            self.transport.write(server_frame(TEXT, payload))

    # -- reading frames

    def data_received(self, received: bytes) -> None:
        if not self.reads_frames:
            super().data_received(received)
            return
        if self.failed:
            return
        unread = self.unread
        data: bytes | bytearray = received
        if unread:  # appended to, not copied: a large message may come in many pieces
            unread += received
            data = unread
        start, end, limit = 0, len(data), self.config.ws_max_size
        while end - start >= 2:
            first, second = data[start], data[start + 1]
            if (first & 0x0F) not in OPCODES:
                return self.fail(PROTOCOL_ERROR, f"unknown opcode {first & 0x0F}")
            if not second & 0x80:
                return self.fail(PROTOCOL_ERROR, "frames from a client must be masked")
            size, head = second & 0x7F, start + 2
            if size == 126:
                if end - head < 2:
                    break
                size, head = int.from_bytes(data[head : head + 2], "big"), head + 2
            elif size == 127:
                if end - head < 8:
                    break
                size, head = int.from_bytes(data[head : head + 8], "big"), head + 8
            if size > limit - self.fragments_size:  # what is left of the message's bound
                return self.fail(TOO_BIG, f"message over {limit} bytes")
            stop = head + 4 + size
            if stop > end:
                break
            if first & 0x70:
                return self.fail(PROTOCOL_ERROR, "reserved bits set: no extension was agreed")
            payload = apply_mask(data[head + 4 : stop], data[head : head + 4])
            start = stop
            read_on = self.frame_received(first & 0x0F, bool(first & 0x80), payload)
            if self.close_sent or self.disconnected:
                return
            if not read_on:
                self.reading_held = True
                self.transport.pause_reading()
                break
        if data is unread:
            del unread[:start]
        elif start < end:
            unread += data[start:]

    def resume_reading(self) -> None:
        if not self.reading_held or self.close_sent or self.disconnected:
            return
        self.reading_held = False
        self.transport.resume_reading()
        if self.unread:
            self.data_received(b"")

    def frame_received(self, opcode: int, final: bool, payload: bytes) -> bool:
        """Take one frame; ``False`` when the listener asked to hold the next ones."""
        if opcode in (TEXT, BINARY):
            if self.fragments is not None:
                self.fail(PROTOCOL_ERROR, "a new message before the last one ended")
            elif final:
                return self.message_received(opcode, payload)
            else:
                self.fragments, self.fragments_opcode = [payload], opcode
                self.fragments_size = len(payload)
        elif opcode == CONTINUATION:
            fragments = self.fragments
            if fragments is None:
                self.fail(PROTOCOL_ERROR, "a continuation of no message")
            elif len(fragments) >= self.max_fragments:
                self.fail(TOO_BIG, f"a message in more than {self.max_fragments} frames")
            elif final:
                fragments.append(payload)
                self.fragments, self.fragments_size = None, 0
                return self.message_received(self.fragments_opcode, b"".join(fragments))
            else:
                fragments.append(payload)
                self.fragments_size += len(payload)
        elif not final or len(payload) > 125:
            self.fail(PROTOCOL_ERROR, "a control frame fragmented or over 125 bytes")
        elif opcode == PING:
            self.ping_received(payload)
        elif opcode == PONG:
            self.handle_pong(Frame(Opcode.PONG, payload))
        else:
            self.close_received(payload)
        return True

    def ping_received(self, payload: bytes) -> None:
        """Answer a ping now, or, while the client reads nothing, once it does: the latest
        ping only (RFC 6455, 5.5.3), so that pings from a client that never reads hold one
        payload here, not a pong each."""
        if self.writable.is_set():
            self.transport.write(server_frame(PONG, payload))
        else:
            self.pending_pong = payload

    def message_received(self, opcode: int, payload: bytes) -> bool:
        data: str | bytes = payload
        if opcode == TEXT:
            try:
                data = payload.decode()
            except UnicodeDecodeError:
                self.fail(INVALID_DATA, "a text message that is not UTF-8")
                return True
        if self.listener is not None:
            return self.listener.message(data)
        kind = "text" if isinstance(data, str) else "bytes"
        self.queue.put_nowait(
            cast("WebSocketReceiveEvent", {"type": "websocket.receive", kind: data})
        )
        if not self.read_paused:  # as uvicorn: one message at a time waits for the app
            self.read_paused = True
            self.transport.pause_reading()
        return True

    def close_received(self, payload: bytes) -> None:
        if self.close_sent:  # the client answered our close: the closing handshake is over
            if self.close_timer is not None:
                self.close_timer.cancel()
                self.close_timer = None
            self.transport.close()
            return
        if len(payload) == 1:
            return self.fail(PROTOCOL_ERROR, "a close frame of one byte")
        try:
            reason = payload[2:].decode()
        except UnicodeDecodeError:
            return self.fail(INVALID_DATA, "a close reason that is not UTF-8")
        code = int.from_bytes(payload[:2], "big") if payload else NO_STATUS
        if payload and not (code in EXTERNAL_CLOSE_CODES or 3000 <= code < 5000):
            return self.fail(PROTOCOL_ERROR, f"close code {code} is not one a peer may send")
        if self.fragments is not None:
            return self.fail(PROTOCOL_ERROR, "a close before the fragmented message ended")
        self.close_sent = True
        self.transport.write(server_frame(CLOSE, payload[:2]))
        self.transport.close()
        self.ended(code, reason)

    def fail(self, code: int, reason: str) -> None:
        """Close the connection for what the client sent: ``code`` and ``reason`` to it, then
        the end of the stream. What the client sends after is read and dropped until it closes
        its end (or ``close_timeout`` passes), so that the close frame reaches it rather than a
        reset for bytes left unread."""
        self.close_sent = self.failed = True
        self.transport.write(server_frame(CLOSE, code.to_bytes(2, "big") + reason.encode()))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.close_timer = self.loop.call_later(self.close_timeout, self.transport.close)
        self.ended(code, reason)

    def ended(self, code: int, reason: str = "") -> None:
        """Tell whoever takes the messages that the connection is over (once)."""
        listener, self.listener = self.listener, None
        if listener is not None:
            listener.closed(code)
        else:
            self.queue.put_nowait({"type": "websocket.disconnect", "code": code, "reason": reason})

    # -- the connection's end and its writes' pace

    def connection_lost(self, exc: Exception | None) -> None:
        listener = self.listener
        super().connection_lost(exc)
        if self.reads_frames:
            # The scope refers to this protocol (the frames' extension) and this protocol to
            # the scope: without that link the connection's objects are freed as soon as the
            # app lets go of them, not at the next full collection (which, with thousands of
            # sessions opening and closing, came late enough to triple the server's RSS).
            self.scope["extensions"].pop(EXTENSION, None)
        if listener is not None:
            self.listener = None
            listener.closed(1005 if exc is None else 1006)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.listener is not None:
            self.listener.writing_paused(True)

    def resume_writing(self) -> None:
        super().resume_writing()
        pong, self.pending_pong = self.pending_pong, None
        if pong is not None and not (self.close_sent or self.transport.is_closing()):
            self.transport.write(server_frame(PONG, pong))
        if self.listener is not None:
            self.listener.writing_paused(False)
