"""The server's frame reader (``openenv_hub.transport.uvicorn_websocket``) against ``websockets``' own, on the
same bytes: whatever a client sends, both take the same messages, answer the same pings and
close with the same code at the same frame.

``websockets`` reads in two layers: its sans-I/O protocol parses frames and refuses what RFC
6455 forbids, and its connections assemble messages from the frames, refusing a message of more
than ``MAX_FRAGMENTS`` frames (1009) and text that is not UTF-8 (1007). The reference here is
that protocol with that assembly, applied frame by frame in the order the frames came. The
reader under test runs in a real uvicorn on 127.0.0.1, reached over a socket, with both ways a
server hands messages on: ASGI's queue and the frames an endpoint takes
(:mod:`openenv_hub.transport.websocket_frames`).
"""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import ServerThread
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.server import ServerProtocol

from openenv_hub.transport.uvicorn_websocket import MAX_FRAGMENTS, WebSocketProtocol
from openenv_hub.transport.websocket_frames import EXTENSION

MAX_SIZE = 100  # bytes of a message: small, so that messages pass it in a few frames
FRAGMENTS = 4  # frames of a message: as small, for the same reason


@dataclass
class Outcome:
    """What a reader made of a client's bytes."""

    messages: list[str | bytes] = field(default_factory=list)
    pongs: list[bytes] = field(default_factory=list)
    close_code: int | None = None  # of the close frame the server sent; None: it sent none


# -- the reference: websockets' protocol, and messages assembled as its connections do


def websockets_reading(data: bytes) -> Outcome:
    protocol = ServerProtocol(max_size=MAX_SIZE, state=State.OPEN)
    protocol.receive_data(data)
    protocol.receive_eof()
    outcome, pieces = Outcome(), list[Frame]()
    for event in protocol.events_received():
        assert isinstance(event, Frame)
        if event.opcode is Opcode.PING:
            outcome.pongs.append(bytes(event.data))
        elif event.opcode in (Opcode.TEXT, Opcode.BINARY, Opcode.CONT):
            if len(pieces) >= FRAGMENTS:  # websockets' TooManyFragments: 1009
                return Outcome(outcome.messages, outcome.pongs, 1009)
            pieces.append(event)
            if event.fin:
                data, text = b"".join(f.data for f in pieces), pieces[0].opcode is Opcode.TEXT
                pieces = []
                try:
                    outcome.messages.append(data.decode() if text else data)
                except UnicodeDecodeError:
                    return Outcome(outcome.messages, outcome.pongs, 1007)
    sent = protocol.close_sent
    outcome.close_code = None if sent is None else sent.code
    return outcome


# -- the reader under test, in a real server


class FewFragments(WebSocketProtocol):
    """The server's protocol with a bound on frames small enough to reach in a few."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_fragments = FRAGMENTS


class Recorder:
    """An ASGI app that keeps the messages of each connection, by path: ``/queue/N`` reads
    them from ASGI's queue, ``/frames/N`` takes the frames as ``/ws`` does."""

    def __init__(self) -> None:
        self.messages: dict[str, list[str | bytes]] = {}
        self.done: dict[str, threading.Event] = {}

    def connection(self, path: str) -> threading.Event:
        self.messages[path], self.done[path] = [], threading.Event()
        return self.done[path]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        path = scope["path"]
        try:
            await receive()  # the connect
            await send({"type": "websocket.accept"})
            if path.startswith("/frames/"):
                await self.take_frames(scope, self.messages[path])
            else:
                while (message := await receive())["type"] == "websocket.receive":
                    text = message.get("text")
                    self.messages[path].append(message["bytes"] if text is None else text)
        finally:
            self.done[path].set()

    @staticmethod
    async def take_frames(scope: Any, messages: list[str | bytes]) -> None:
        over = asyncio.get_running_loop().create_future()

        class Listener:
            def message(self, data: str | bytes) -> bool:
                messages.append(data)
                return True

            def closed(self, code: int) -> None:
                if not over.done():
                    over.set_result(code)

            def writing_paused(self, paused: bool) -> None:
                pass

        scope["extensions"][EXTENSION]["take"](Listener())
        await over


@dataclass
class Served:
    server: Any
    app: Recorder
    paths: Iterator[int] = field(default_factory=count)

    def reading(self, data: bytes, way: str) -> Outcome:
        path = f"/{way}/{next(self.paths)}"
        done = self.app.connection(path)
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=10) as sock:
            received = handshake(sock, path)
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)  # and then the end of the stream, as the reference
            while chunk := sock.recv(65536):
                received += chunk
        assert done.wait(10), "the connection did not end"
        outcome = server_frames(received)
        outcome.messages = self.app.messages.pop(path)
        return outcome


def handshake(sock: socket.socket, path: str) -> bytes:
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        .encode()
    )  # fmt: skip
    buffer = b""
    while b"\r\n\r\n" not in buffer:
        buffer += sock.recv(65536)
    response, _, rest = buffer.partition(b"\r\n\r\n")
    assert response.startswith(b"HTTP/1.1 101"), response
    return rest


def server_frames(data: bytes) -> Outcome:
    """The pongs and the close code in what the server sent (unmasked frames)."""
    outcome, start = Outcome(), 0
    while start < len(data):
        opcode, size, head = data[start] & 0x0F, data[start + 1] & 0x7F, start + 2
        if size == 126:
            size, head = int.from_bytes(data[head : head + 2], "big"), head + 2
        elif size == 127:
            size, head = int.from_bytes(data[head : head + 8], "big"), head + 8
        payload, start = data[head : head + size], head + size
        if opcode == 0xA:
            outcome.pongs.append(payload)
        elif opcode == 0x8:
            outcome.close_code = int.from_bytes(payload[:2], "big") if payload else 1005
            break
    return outcome


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    app = Recorder()
    server = ServerThread(app, ws=FewFragments, ws_max_size=MAX_SIZE, lifespan="on")
    server.start()
    yield Served(server, app)
    server.stop()


# -- what a client may send: frames as they should be, and every way they may not


@st.composite
def encoded(draw: st.DrawFn, opcode: int, payload: bytes, final: bool = True) -> bytes:
    """One frame, mostly as a client must send it: masked, no reserved bit, any of the three
    lengths that fit."""
    first = (0x80 if final else 0) | draw(st.sampled_from([0] * 120 + [0x40, 0x20, 0x10])) | opcode
    mask_bit = draw(st.sampled_from([0x80] * 120 + [0]))
    size = len(payload)
    forms = ["7"] * 4 + ["16", "64"] if size < 126 else ["16", "64"]
    length = draw(st.sampled_from(forms))
    if length == "7":
        head = bytes((first, mask_bit | size))
    elif length == "16":
        head = bytes((first, mask_bit | 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((first, mask_bit | 127)) + size.to_bytes(8, "big")
    if not mask_bit:
        return head + payload
    key = draw(st.binary(min_size=4, max_size=4))
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


PAYLOADS = (
    st.text(max_size=40).map(str.encode)
    | st.binary(max_size=130)
    | st.sampled_from([b"\xe2\x82", b"\xac", b"\xed\xa0\x80", b"\xff", b"x" * 101])
)


@st.composite
def message(draw: st.DrawFn) -> bytes:
    """A text or binary message in one frame or several (the bounds are 4 and 100 bytes),
    perhaps with pings between its frames."""
    text = draw(st.booleans())
    data = draw(st.text(max_size=60).map(str.encode) if text else st.binary(max_size=120))
    if text and draw(st.sampled_from([False] * 5 + [True])):
        data += draw(st.sampled_from([b"\xff", b"\xe2\x82", b"\xed\xa0\x80"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=6)))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    frames = []
    for i, piece in enumerate(pieces):
        opcode = (0x1 if text else 0x2) if i == 0 else 0x0
        frames.append(draw(encoded(opcode, piece, final=i == len(pieces) - 1)))
        if draw(st.sampled_from([False] * 6 + [True])):
            frames.append(draw(control()))
    return b"".join(frames)


@st.composite
def control(draw: st.DrawFn) -> bytes:
    opcode = draw(st.sampled_from([0x9, 0x9, 0xA, 0x8]))
    if opcode != 0x8:
        return draw(encoded(opcode, draw(st.binary(max_size=20) | PAYLOADS)))
    code = draw(
        st.sampled_from([1000, 1001, 1002, 1005, 1006, 1009, 1015, 3000, 4999, 5000, 999])
        | st.integers(0, 65535)
    )
    reason = draw(st.text(max_size=20).map(str.encode) | st.sampled_from([b"\xff", b"\xc3"]))
    payload = draw(st.sampled_from([code.to_bytes(2, "big") + reason] * 4 + [b"", b"\x03"]))
    return draw(encoded(0x8, payload))


@st.composite
def stray(draw: st.DrawFn) -> bytes:
    """A frame of any opcode, final or not: often one a client may not send where it is."""
    opcode = draw(st.integers(0, 15))
    return draw(encoded(opcode, draw(PAYLOADS), final=draw(st.booleans())))


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    """Messages, control frames and stray frames one after the other, perhaps cut short, perhaps
    followed by stray bytes."""
    parts = st.sampled_from(["message"] * 4 + ["control"] * 2 + ["stray"])
    data = b""
    for part in draw(st.lists(parts, max_size=8)):
        data += draw({"message": message, "control": control, "stray": stray}[part]())
    if draw(st.sampled_from([False] * 3 + [True])):
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.sampled_from([False] * 6 + [True])):
        data += draw(st.binary(max_size=20))
    return data


def test_the_bound_on_frames_is_websockets_own() -> None:
    from websockets.asyncio import messages

    if not hasattr(messages, "MAX_FRAGMENTS"):
        pytest.skip("this websockets assembles messages of any number of frames")
    assert MAX_FRAGMENTS == messages.MAX_FRAGMENTS == 4096


@pytest.mark.parametrize("way", ["queue", "frames"])
def test_the_reader_reads_as_websockets_does(served: Served, way: str) -> None:
    @settings(
        max_examples=300,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(streams())
    def same_reading(data: bytes) -> None:
        assert served.reading(data, way) == websockets_reading(data), data

    same_reading()
