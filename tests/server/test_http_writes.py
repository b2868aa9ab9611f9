"""A response's head and body reach the socket in one write: one TCP segment and one wake-up of
the client instead of two (uvicorn writes the head as soon as the app starts the response)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("httptools")

from uvicorn.config import Config
from uvicorn.server import ServerState

from openenv_hub.transport.uvicorn_http import BoundedHeadsProtocol

REQUEST = b"POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"


class Recorded(asyncio.Transport):
    """What the protocol hands the socket, write by write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(
            name, default
        )

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


async def _answer(app: Any, request: bytes = REQUEST) -> Recorded:
    config = Config(app, log_level="warning", access_log=False)
    config.load()
    protocol = BoundedHeadsProtocol(config, ServerState(), {})
    transport = Recorded()
    protocol.connection_made(transport)
    protocol.data_received(request)
    for _ in range(5000):  # 5 s at most
        await asyncio.sleep(0.001)
        if protocol.cycle is not None and protocol.cycle.response_complete:
            break
    protocol.connection_lost(None)
    return transport


async def _one_body(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"5")]})  # fmt: skip
    await send({"type": "http.response.body", "body": b"hello"})


async def _waits_before_its_body(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await asyncio.sleep(0.01)
    await send({"type": "http.response.body", "body": b"late"})


async def test_a_head_and_its_body_go_out_in_one_write() -> None:
    (written,) = (await _answer(_one_body)).writes
    assert written.startswith(b"HTTP/1.1 200 OK\r\n") and written.endswith(b"\r\n\r\nhello")


async def test_a_head_whose_body_waits_goes_out_first() -> None:
    """A stream's head is not kept back until its first bytes."""
    writes = (await _answer(_waits_before_its_body)).writes
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\n")
    assert b"late" in b"".join(writes[1:])
