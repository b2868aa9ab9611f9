"""A lean WebSocket load: many sessions of ``/ws`` stepped from one process at little CPU cost.

``sessions.py`` measures the server; its clients share the machine's cores with it, so every
microsecond a client spends on a step is taken from the server. A ``websockets`` client costs
50 to 110 us of CPU a step (a task and a timer per ``recv``, its frame parser, its keepalive),
more than the server it drives. Here each session is one ``asyncio.Protocol``: the handshake is
written by hand, its frames are encoded once and masked with its own key, and a reply's frame
is read from the buffer and answered by the next step in the same callback, with no task,
future or timer per step.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

TEXT, CLOSE, PING, PONG = 0x1, 0x8, 0x9, 0xA


def client_frame(opcode: int, payload: bytes, mask: bytes) -> bytes:
    """One final, masked frame as a client must send it."""
    size = len(payload)
    if size < 126:
        header = bytes([0x80 | opcode, 0x80 | size])
    elif size < 1 << 16:
        header = bytes([0x80 | opcode, 0x80 | 126]) + size.to_bytes(2, "big")
    else:
        header = bytes([0x80 | opcode, 0x80 | 127]) + size.to_bytes(8, "big")
    key = (mask * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(size, "big")
    return header + mask + masked


def server_frames(buffer: bytearray) -> list[tuple[int, bytes]]:
    """The whole frames at the head of ``buffer`` (unmasked, as a server sends), removed from it."""
    frames, start, end = [], 0, len(buffer)
    while end - start >= 2:
        first, size = buffer[start], buffer[start + 1] & 0x7F
        head = 2
        if size == 126:
            if end - start < 4:
                break
            size, head = int.from_bytes(buffer[start + 2 : start + 4], "big"), 4
        elif size == 127:
            if end - start < 10:
                break
            size, head = int.from_bytes(buffer[start + 2 : start + 10], "big"), 10
        if end - start < head + size:
            break
        if not first & 0x80:
            raise ValueError("a fragmented frame: this load generator reads whole messages only")
        frames.append((first & 0x0F, bytes(buffer[start + head : start + head + size])))
        start += head + size
    del buffer[:start]
    return frames


@dataclass
class Run:
    """What every session of one process shares while stepping: the count and the results."""

    steps: int
    left: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    done: asyncio.Future[None] | None = None

    def finished_one(self) -> None:
        self.left -= 1
        if self.left == 0 and self.done is not None and not self.done.done():
            self.done.set_result(None)


class Session(asyncio.Protocol):
    """One WebSocket session: handshake, reset, then ``run.steps`` steps one after the other."""

    def __init__(self, host: str, path: str, reset: bytes, step: bytes, run: Run) -> None:
        self.host, self.path, self.run = host, path, run
        mask = os.urandom(4)
        self.mask = mask
        self.reset_frame = client_frame(TEXT, reset, mask)
        self.step_frame = client_frame(TEXT, step, mask)
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.upgraded = False
        self.opened: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.on_reply: Callable[[bytes], None] = self._reset_answered
        self.left = 0
        self.started = 0.0
        self.lost: str | None = None  # why the connection ended before its steps, if it did

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        key = base64.b64encode(os.urandom(16)).decode()
        transport.write(
            f"GET {self.path} HTTP/1.1\r\nHost: {self.host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.upgraded:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(self.buffer[: self.buffer.find(b"\r\n")])
            del self.buffer[: end + 4]
            if b" 101 " not in status + b" ":
                self._fail(f"handshake: {status.decode(errors='replace')}")
                return
            self.upgraded = True
            self._write(self.reset_frame)
        for opcode, payload in server_frames(self.buffer):
            if opcode == TEXT:
                self.on_reply(payload)
            elif opcode == PING:
                self._write(client_frame(PONG, payload, self.mask))
            elif opcode == CLOSE:
                self._fail(f"closed by the server: {payload[2:].decode(errors='replace')}")

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(f"connection lost: {exc}")
        if not self.closed.done():
            self.closed.set_result(None)

    # -- the session's course

    def _reset_answered(self, payload: bytes) -> None:
        self.on_reply = self._unexpected
        if not self.opened.done():
            self.opened.set_result(payload)

    def _unexpected(self, payload: bytes) -> None:
        self.run.errors.append(f"a reply nobody asked for: {payload[:200]!r}")

    def start_steps(self) -> None:
        if self.lost is not None:  # opened, then lost while the others opened: an error
            self.run.errors.append(f"lost before its steps: {self.lost}")
            self.run.finished_one()
            return
        self.left = self.run.steps
        self.on_reply = self._stepped
        self.started = time.perf_counter()
        self._write(self.step_frame)

    def _stepped(self, payload: bytes) -> None:
        self.run.latencies.append(time.perf_counter() - self.started)
        if b'"type":"error"' in payload or b'"type": "error"' in payload:
            self.run.errors.append(f"step: {payload[:200]!r}")
        self.left -= 1
        if self.left:
            self.started = time.perf_counter()
            self._write(self.step_frame)
        else:
            self.on_reply = self._unexpected
            self.run.finished_one()

    def close(self) -> None:
        self.on_reply = self._unexpected
        self.left = -1  # a close now is no failure
        self._write(client_frame(CLOSE, (1000).to_bytes(2, "big"), self.mask))
        if self.transport is not None:
            self.transport.close()

    def _write(self, frame: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(frame)

    def _fail(self, why: str) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(why))
        elif self.left > 0:
            self.run.errors.append(why)
            self.left = 0
            self.run.finished_one()
        elif self.left == 0 and self.lost is None:
            self.lost = why  # matters before its steps only (start_steps counts it)
        if self.transport is not None:
            self.transport.close()


async def open_session(
    url: str, reset: str, step: str, run: Run, timeout_s: float, source: str | None = None
) -> Session:
    """Connect to ``ws://HOST:PORT/PATH`` (from the local address ``source``, if given),
    upgrade and reset; the reset's reply is checked."""
    rest = url.removeprefix("ws://")
    address, _, path = rest.partition("/")
    host, _, port = address.partition(":")
    loop = asyncio.get_running_loop()
    made = lambda: Session(address, "/" + path, reset.encode(), step.encode(), run)  # noqa: E731
    if source:
        _, session = await loop.create_connection(
            made, sock=await _connected_from(source, host, int(port))
        )
    else:
        _, session = await loop.create_connection(made, host, int(port))
    reply = await asyncio.wait_for(session.opened, timeout_s)
    if b'"type":"observation"' not in reply.replace(b" ", b""):
        session.close()
        raise ConnectionError(f"reset: {reply[:300]!r}")
    return session


#: Linux's IP_BIND_ADDRESS_NO_PORT: a bind to an address takes its port at connect() instead,
#: where a port is free if the whole 4-tuple is. A plain bind(address, 0) searches the range for
#: a port no socket of that address holds, a search that grows with the ports held: at 14,000
#: connections an address, opening the next took most of a client's time.
_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)


async def _connected_from(source: str, host: str, port: int) -> socket.socket:
    """A TCP socket connected to ``host:port`` from the local address ``source``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        with contextlib.suppress(OSError):  # not Linux: a plain bind, slower past many ports
            sock.setsockopt(socket.IPPROTO_IP, _BIND_ADDRESS_NO_PORT, 1)
        sock.bind((source, 0))
        await asyncio.get_running_loop().sock_connect(sock, (host, port))
    except BaseException:
        sock.close()
        raise
    return sock


async def step_all(sessions: list[Session], run: Run) -> None:
    """Every session steps ``run.steps`` times, all at once; returns when the last has."""
    run.left = len(sessions)
    run.done = asyncio.get_running_loop().create_future()
    for session in sessions:
        session.start_steps()
    if sessions:
        await run.done
