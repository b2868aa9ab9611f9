"""The cheapest clients a benchmark can drive a server with: a WebSocket and an HTTP/1.1
keep-alive connection over a bare blocking socket, in the calling thread.

With one client and one server taking turns on two cores, the client's own time a request is
part of every figure: openenv-hub's ``GenericEnvClient`` and ``httpx`` cost about as much a
request as the servers they measure, so a ratio of two servers taken with them is pulled
towards 1. These clients do next to nothing but send a prepared frame or request and read the
answer, so what they measure is mostly the server. (The ``websockets`` library's synchronous
client reads in a thread of its own, a hand-off between threads at every frame, which is why it
is not used.) Each checks the answers: a server that answers an error is not counted as fast.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import struct
import time
from typing import Any, BinaryIO

#: Steps ``ws_steps`` takes, after its reset, before it starts the clock.
WARM_UP_STEPS = 20


def ws_steps(url: str, action: dict[str, Any], steps: int) -> float:
    """Sequential ``/ws`` steps a second, one frame out and its answer in at a time."""
    host, port = _address(url)
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        answers = sock.makefile("rb")
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        status = answers.readline()
        if not status.startswith(b"HTTP/1.1 101"):
            raise RuntimeError(f"the server refused the WebSocket: {status!r}")
        while answers.readline() not in (b"\r\n", b""):
            pass
        sock.sendall(_text_frame({"type": "reset", "data": {}}))
        _observation(_read_frame(answers))
        frame = _text_frame({"type": "step", "data": action})
        for _ in range(WARM_UP_STEPS):
            sock.sendall(frame)
            _observation(_read_frame(answers))
        started = time.perf_counter()
        for _ in range(steps):
            sock.sendall(frame)
            answer = _read_frame(answers)
            if b"observation" not in answer[:40]:  # cheap; JSON read only when it might not be
                _observation(answer)
        elapsed = time.perf_counter() - started
    return steps / elapsed


def _text_frame(message: dict[str, Any]) -> bytes:
    """A final text frame, masked as a client's must be (with the all-zero key, which leaves
    the payload as it is)."""
    payload = json.dumps(message).encode()
    if len(payload) < 126:
        head = struct.pack("!BB", 0x81, 0x80 | len(payload))
    else:
        head = struct.pack("!BBH", 0x81, 0x80 | 126, len(payload))
    return head + b"\0\0\0\0" + payload


def _read_frame(answers: BinaryIO) -> bytes:
    """One whole unmasked frame's payload (the servers measured send no fragments)."""
    first, second = answers.read(2)
    length = second & 0x7F
    if length == 126:
        (length,) = struct.unpack("!H", answers.read(2))
    elif length == 127:
        (length,) = struct.unpack("!Q", answers.read(8))
    if first & 0x0F != 0x1:
        raise RuntimeError(f"the server sent a frame of opcode {first & 0x0F}, not text")
    return answers.read(length)


def _observation(answer: bytes) -> None:
    kind = json.loads(answer).get("type")
    if kind != "observation":
        raise RuntimeError(f"the server answered {kind!r}, not an observation: {answer[:200]!r}")


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


def http_steps(url: str, action: dict[str, Any], seconds: float) -> float:
    """Stateless ``POST /step`` requests a second on one keep-alive connection."""
    host, port = _address(url)
    body = json.dumps({"action": action}).encode()
    request = (
        f"POST /step HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    with socket.create_connection((host, port), timeout=30) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        answers = sock.makefile("rb")

        def one() -> bytes:
            sock.sendall(request)
            status = answers.readline()
            length = None
            while (line := answers.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if not status.startswith(b"HTTP/1.1 200") or length is None:
                raise RuntimeError(f"the server answered {status!r} (a length: {length})")
            return answers.read(length)

        json.loads(one())
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            answer = one()
            count += 1
        json.loads(answer)
    return count / (time.perf_counter() - started)
