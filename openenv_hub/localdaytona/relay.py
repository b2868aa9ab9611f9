"""Connections to a port inside a sandbox, through the Unix socket of its daemon
(:mod:`.sandbox_daemon`): one line with the port, ``OK`` back, then the bytes of the connection.

:class:`SandboxBackend` is an ``httpcore`` network backend that opens every connection this way,
so an ``httpcore`` pool over it sends HTTP requests to ``http://127.0.0.1:PORT/...`` inside the
sandbox; :func:`open_socket` gives a connected socket for a WebSocket client.

Layer: runtimes.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterable
from typing import Any

import httpcore

__all__ = ["PortClosed", "SandboxBackend", "open_socket"]

_REPLY_MAX = 256


class PortClosed(ConnectionError):
    """Nothing listens on the port inside the sandbox (or the sandbox's daemon is gone)."""


class SandboxBackend(httpcore.AsyncNetworkBackend):
    """Opens TCP connections to ports inside one sandbox through its daemon's socket."""

    def __init__(self, socket_path: str) -> None:
        self.socket_path = socket_path
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None,
        local_address: str | None = None, socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:  # fmt: skip
        try:
            stream = await self._inner.connect_unix_socket(self.socket_path, timeout=timeout)
        except (httpcore.ConnectError, OSError) as exc:
            raise httpcore.ConnectError(f"the sandbox's daemon does not answer: {exc}") from None
        try:
            await stream.write(f"{port}\n".encode(), timeout=timeout)
            reply = b""
            while not reply.endswith(b"\n") and len(reply) < _REPLY_MAX:
                chunk = await stream.read(1, timeout=timeout)
                if not chunk:
                    break
                reply += chunk
        except BaseException:
            await stream.aclose()
            raise
        if reply != b"OK\n":
            await stream.aclose()
            said = reply.decode(errors="replace").strip().removeprefix("ERR ") or "closed"
            raise httpcore.ConnectError(f"nothing answers on port {port} in the sandbox ({said})")
        return stream

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:  # fmt: skip
        return await self._inner.connect_unix_socket(path, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def open_socket(socket_path: str, port: int, timeout_s: float = 10.0) -> socket.socket:
    """A socket connected to ``port`` inside the sandbox (for a WebSocket client's ``sock=``).

    Raises:
        PortClosed: Nothing listens there, or the daemon does not answer in ``timeout_s``.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        reply = await asyncio.wait_for(_handshake(sock, socket_path, port), timeout_s)
    except (OSError, asyncio.TimeoutError) as exc:
        sock.close()
        raise PortClosed(f"the sandbox's daemon does not answer: {exc!r}") from None
    if reply != b"OK\n":
        sock.close()
        said = reply.decode(errors="replace").strip().removeprefix("ERR ") or "closed"
        raise PortClosed(f"nothing answers on port {port} in the sandbox ({said})")
    return sock


async def _handshake(sock: socket.socket, socket_path: str, port: int) -> bytes:
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, socket_path)
    await loop.sock_sendall(sock, f"{port}\n".encode())
    reply = b""
    while not reply.endswith(b"\n") and len(reply) < _REPLY_MAX:
        chunk = await loop.sock_recv(sock, 1)
        if not chunk:
            break
        reply += chunk
    return reply
