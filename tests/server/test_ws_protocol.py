"""The WebSocket protocol servers run (``openenv_hub.transport.uvicorn_websocket``): ``/ws`` takes its frames
from it without ASGI's messages, and it reads what a client may send as RFC 6455 says, byte by
byte over a raw socket."""

from __future__ import annotations

import base64
import gc
import json
import os
import socket
import time
import weakref
from pathlib import Path
from typing import Any

import pytest
from sample_envs import Echoed, Message, Typed
from websockets.sync.client import connect

from openenv_hub import create_app
from openenv_hub.protocol import MAX_PIPELINED
from openenv_hub.transport.uvicorn_websocket import WebSocketProtocol

RESET = json.dumps({"type": "reset"}).encode()


def step(message: str) -> str:
    return json.dumps({"type": "step", "data": {"message": message}})


def frame(opcode: int, payload: bytes, *, final: bool = True, mask: bool = True) -> bytes:
    """A frame as a client sends it (``mask=False``: as it must not)."""
    size = len(payload)
    first = (0x80 if final else 0) | opcode
    if size < 126:
        head = bytes((first, (0x80 if mask else 0) | size))
    else:
        head = bytes((first, (0x80 if mask else 0) | 127)) + size.to_bytes(8, "big")
    if not mask:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


class RawSocket:
    """A WebSocket client written by hand: the handshake, frames as given, frames as read."""

    def __init__(
        self, server: Any, *, offer_deflate: bool = False, receive_buffer: int | None = None
    ) -> None:
        self.sock = socket.socket()
        self.sock.settimeout(10)
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect(("127.0.0.1", server.port))
        key = base64.b64encode(os.urandom(16)).decode()
        extension = "Sec-WebSocket-Extensions: permessage-deflate\r\n" if offer_deflate else ""
        self.sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extension}\r\n".encode()
        )
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        self.response, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        assert self.response.startswith(b"HTTP/1.1 101"), self.response

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def read(self) -> tuple[int, bytes]:
        """The next frame from the server: (opcode, payload); (-1, b"") once it closed."""
        while True:
            if len(self.buffer) >= 2:
                size, head = self.buffer[1] & 0x7F, 2
                if size == 126:
                    size, head = int.from_bytes(self.buffer[2:4], "big"), 4
                elif size == 127:
                    size, head = int.from_bytes(self.buffer[2:10], "big"), 10
                if len(self.buffer) >= head + size:
                    opcode, payload = self.buffer[0] & 0x0F, self.buffer[head : head + size]
                    self.buffer = self.buffer[head + size :]
                    return opcode, payload
            chunk = self.sock.recv(65536)
            if not chunk:
                return -1, b""
            self.buffer += chunk

    def close_code(self) -> int:
        """The code of the close frame the server sends next, skipping replies before it."""
        while True:
            opcode, payload = self.read()
            if opcode == 0x8:
                return int.from_bytes(payload[:2], "big")
            assert opcode != -1, "closed without a close frame"

    def __enter__(self) -> RawSocket:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


@pytest.fixture
def server(serve: Any) -> Any:
    return serve(create_app(Typed, Message, Echoed, max_message_size_mb=0.05))


def test_ws_takes_its_frames_without_asgi_messages(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the handshake (one ``receive``: the connect), no step goes through ASGI's queue."""
    received: list[str] = []
    asgi_receive = WebSocketProtocol.receive

    async def counted(self: WebSocketProtocol) -> Any:
        message = await asgi_receive(self)
        received.append(message["type"])
        return message

    monkeypatch.setattr(WebSocketProtocol, "receive", counted)
    server = serve(create_app(Typed, Message, Echoed))
    with connect(server.url.replace("http", "ws") + "/ws") as s:
        s.send(RESET.decode())
        s.recv(timeout=10)
        for i in range(20):
            s.send(step(f"m{i}"))
            assert json.loads(s.recv(timeout=10))["data"]["observation"]["echoed_message"] == (
                f"m{i}"
            )
    assert received == ["websocket.connect"]


def test_a_closed_connections_objects_are_freed_without_the_cyclic_collector(
    server: Any,
) -> None:
    """Thousands of sessions opening and closing: what a connection held goes when it ends,
    not at the next full collection (which came late enough to triple the server's RSS)."""
    gc.collect()
    gc.disable()
    try:
        with connect(server.url.replace("http", "ws") + "/ws") as s:
            s.send(RESET.decode())
            s.recv(timeout=10)
            s.send(step("m"))
            s.recv(timeout=10)
            (protocol,) = [
                weakref.ref(c)
                for c in server.server.server_state.connections
                if isinstance(c, WebSocketProtocol)
            ]
        server.wait_for(lambda: server.pool.active_sessions == 0)
        deadline = time.monotonic() + 5
        while protocol() is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert protocol() is None, gc.get_referrers(protocol())
    finally:
        gc.enable()


def test_ws_still_serves_on_uvicorns_own_protocol(serve: Any) -> None:
    """Under a server without the extension (``uvicorn app:app``), ``/ws`` reads ASGI's
    messages as before."""
    server = serve(create_app(Typed, Message, Echoed), ws="websockets-sansio")
    with connect(server.url.replace("http", "ws") + "/ws") as s:
        s.send(RESET.decode())
        assert json.loads(s.recv(timeout=10))["type"] == "observation"
        for i in range(5):
            s.send(step(f"m{i}"))
        replies = [json.loads(s.recv(timeout=10)) for _ in range(5)]
    assert [r["data"]["observation"]["echoed_message"] for r in replies] == [
        f"m{i}" for i in range(5)
    ]


def test_a_message_in_fragments_is_read_whole(server: Any) -> None:
    with RawSocket(server) as ws:
        ws.send(frame(0x1, RESET[:5], final=False) + frame(0x0, RESET[5:9], final=False))
        ws.send(frame(0x0, RESET[9:]))
        opcode, payload = ws.read()
        assert (opcode, json.loads(payload)["type"]) == (0x1, "observation")


def test_a_ping_between_fragments_is_answered_with_its_payload(server: Any) -> None:
    with RawSocket(server) as ws:
        ws.send(frame(0x1, RESET[:5], final=False) + frame(0x9, b"are you there"))
        assert ws.read() == (0xA, b"are you there")
        ws.send(frame(0x0, RESET[5:]))
        assert json.loads(ws.read()[1])["type"] == "observation"


def test_frames_split_anywhere_across_packets_are_read(server: Any) -> None:
    whole = frame(0x1, RESET) + frame(0x1, step("a").encode()) + frame(0x1, step("b").encode())
    with RawSocket(server) as ws:
        for i in range(len(whole)):
            ws.send(whole[i : i + 1])
        replies = [json.loads(ws.read()[1]) for _ in range(3)]
    assert [r["type"] for r in replies] == ["observation"] * 3
    assert [r["data"]["observation"]["echoed_message"] for r in replies[1:]] == ["a", "b"]


@pytest.mark.parametrize(
    ("sent", "code"),
    [
        (frame(0x1, RESET, mask=False), 1002),  # a client's frames must be masked
        (bytes((0x80 | 0x40 | 0x1, 0x80)) + b"\0\0\0\0", 1002),  # a reserved bit, no extension
        (frame(0x0, b"nothing to continue"), 1002),
        (frame(0x3, b""), 1002),  # an opcode with no meaning
        (frame(0x9, b"x" * 126), 1002),  # a control frame over 125 bytes
        (frame(0x1, b"\xff\xfe not UTF-8"), 1007),
        # a message announced over the frame limit (0.05 MB) is refused before it is read
        (bytes((0x81, 0x80 | 127)) + (10 * 1024 * 1024).to_bytes(8, "big"), 1009),
    ],
    ids=["unmasked", "reserved-bit", "stray-continuation", "unknown-opcode", "long-ping",
         "bad-utf8", "too-big"],
)  # fmt: skip
def test_what_a_client_may_not_send_closes_with_the_rfcs_code(
    server: Any, sent: bytes, code: int
) -> None:
    with RawSocket(server) as ws:
        ws.send(sent)
        assert ws.close_code() == code
        server.wait_for(lambda: server.pool.active_sessions == 0)
        ws.sock.shutdown(socket.SHUT_WR)  # what the client sends is dropped until it closes
        assert ws.read() == (-1, b"")  # and then the server closes the connection


def test_fragments_adding_up_past_the_limit_close_with_1009(server: Any) -> None:
    piece = b"x" * 30_000
    with RawSocket(server) as ws:
        ws.send(frame(0x1, piece, final=False) + frame(0x0, piece, final=False))
        assert ws.close_code() == 1009
        ws.send(frame(0x1, piece))  # read and dropped: no reset that could lose the close
        ws.sock.shutdown(socket.SHUT_WR)
        assert ws.read() == (-1, b"")


def rss_mib() -> float:
    """This process's resident memory (the server runs in a thread of it)."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def test_a_message_in_millions_of_empty_fragments_is_refused_and_held_nowhere(
    server: Any,
) -> None:
    """10 million empty continuation frames (60 MB on the wire, never over the size limit)
    added 76 MB to the server: a message may come in 4,096 frames, as ``websockets`` allows,
    and the next one closes the connection with 1009; what follows is dropped unread."""
    empty = frame(0x0, b"", final=False) * 10_000
    with RawSocket(server) as ws:
        ws.send(frame(0x1, b"", final=False))
        before = rss_mib()
        for _ in range(1_000):
            ws.send(empty)
        grown = rss_mib() - before
        assert grown < 10, f"the server grew by {grown:.0f} MiB"
        assert ws.close_code() == 1009
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_4096_frames_still_make_a_message(server: Any) -> None:
    pieces = [RESET[:1], *[b""] * 4094, RESET[1:]]
    with RawSocket(server) as ws:
        ws.send(frame(0x1, pieces[0], final=False))
        ws.send(b"".join(frame(0x0, piece, final=False) for piece in pieces[1:-1]))
        ws.send(frame(0x0, pieces[-1]))
        opcode, payload = ws.read()
        assert (opcode, json.loads(payload)["type"]) == (0x1, "observation")


def test_pings_from_a_client_that_never_reads_hold_one_pong(server: Any) -> None:
    """Each ping was answered by a pong queued whether or not the client read: 260 MB of pings
    added 375 MB to the server. While replies wait for the client, only its latest ping is
    answered, once it reads again (RFC 6455, 5.5.3)."""
    pings = frame(0x9, b"p" * 125) * 500
    with RawSocket(server, receive_buffer=4096) as ws:
        before = rss_mib()
        for _ in range(1_000):  # 65 MB of pings, 64 MB of pongs were they all queued
            ws.send(pings)
        ws.send(frame(0x9, b"the latest"))
        grown = rss_mib() - before
        assert grown < 10, f"the server grew by {grown:.0f} MiB"
        pongs = []
        while (pong := ws.read()) != (0xA, b"the latest"):
            assert pong == (0xA, b"p" * 125), pong
            pongs.append(pong)
        assert len(pongs) < 100_000  # those the socket buffers held; not one per ping
        ws.send(frame(0x1, RESET))  # and the connection serves on
        assert json.loads(ws.read()[1])["type"] == "observation"


def test_a_close_is_answered_with_its_code_and_frees_the_session(server: Any) -> None:
    with RawSocket(server) as ws:
        ws.send(frame(0x1, RESET))
        ws.read()
        assert server.pool.active_sessions == 1
        ws.send(frame(0x8, (1000).to_bytes(2, "big") + b"bye"))
        assert ws.close_code() == 1000
        assert ws.read() == (-1, b"")
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_compression_is_not_agreed_so_frames_stay_direct(server: Any) -> None:
    with RawSocket(server, offer_deflate=True) as ws:
        assert b"sec-websocket-extensions" not in ws.response.lower()
        ws.send(frame(0x1, RESET))
        assert json.loads(ws.read()[1])["type"] == "observation"


class CountedSteps(Typed):
    """:class:`Typed`, counting the steps its instances have begun (the server's progress)."""

    begun = 0

    def step(self, action: Message, timeout_s: float | None = None, **kwargs: Any) -> Echoed:
        CountedSteps.begun += 1
        return super().step(action, timeout_s, **kwargs)


def test_a_client_that_never_reads_is_closed_not_buffered_for(serve: Any) -> None:
    """Replies pile up in the server only to its transport's high-water mark: then the next
    request waits, those behind it count against the pipelining limit, and the connection is
    refused with 1008 instead of answering (and buffering) every request. Each request is sent
    once the server has begun the one before (or has begun none for 50 ms), so that it is the
    replies piling up that make the server refuse, and not a burst of requests that a server
    held back by a busy machine reads at once; the close frame itself waits behind the replies
    for the client to read."""
    server = serve(create_app(CountedSteps, Message, Echoed, max_message_size_mb=0.05))
    CountedSteps.begun = 0
    with RawSocket(server, receive_buffer=4096) as ws:
        ws.send(frame(0x1, RESET))
        request = frame(0x1, step("x" * 40_000).encode())
        sent = 0
        # Until more wait than the server lets a client pipeline: 24 MB of replies at most
        while sent < 600 and sent - CountedSteps.begun <= MAX_PIPELINED + 4:
            ws.sock.sendall(request)
            sent += 1
            taken_by = time.monotonic() + 0.05
            while CountedSteps.begun < sent and time.monotonic() < taken_by:
                time.sleep(0.0005)
        replies = 0
        while (opcode := ws.read()[0]) == 0x1:
            replies += 1
        assert opcode == 0x8
    assert 30 < replies < 300  # a few MB of replies, then the refusal
