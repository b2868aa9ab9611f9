"""A client's close lets go of its socket even when the caller stops waiting for the closing
handshake (EnvPool gives a dropped session 5 s, the connection's own close timeout is 10 s)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from websockets.utils import accept_key

from openenv_hub import GenericEnvClient


@contextlib.asynccontextmanager
async def server_that_never_closes() -> AsyncIterator[str]:
    """A WebSocket server that accepts the upgrade, then reads and ignores every frame: it
    never answers a close frame."""

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        key = next(
            line.split(b":", 1)[1].strip().decode()
            for line in request.split(b"\r\n")
            if line.lower().startswith(b"sec-websocket-key:")
        )
        accepted = accept_key(key).encode()
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accepted + b"\r\n\r\n"
        )
        with contextlib.suppress(ConnectionError):
            while await reader.read(4096):
                pass
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


async def test_a_close_the_caller_stops_waiting_for_still_closes_the_socket() -> None:
    async with server_that_never_closes() as url:
        client = GenericEnvClient(url)
        await client.connect()
        ws = client._ws
        assert ws is not None and not ws.transport.is_closing()
        with pytest.raises(asyncio.TimeoutError):  # TimeoutError from Python 3.11
            await asyncio.wait_for(client.close(), 0.5)
        assert ws.transport.is_closing()
