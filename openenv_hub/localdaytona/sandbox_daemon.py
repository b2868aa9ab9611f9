"""The local Daytona's daemon: the first process of every sandbox, run by the sandbox's own
``python3`` from a folder the host shares with it (standard library only, so any image with a
Python 3.8+ runs it).

It does two things a container's first process must do, and one the preview proxy needs:

- it forwards connections to ports inside the sandbox: the preview proxy, on the host, connects
  to the Unix socket given as the first argument (in the shared folder) and sends one line, the
  port (``8000\\n``); the daemon connects to ``127.0.0.1:PORT`` inside the sandbox's own network
  and answers ``OK\\n``, or ``ERR <why>\\n`` and closes; then bytes flow both ways. A sandbox with
  no network is reached this way all the same;
- it reaps the processes left to it (a server started in the background whose shell exited),
  so that a server that exits is gone, not a zombie that ``kill -0`` still finds;
- it exits at once on SIGTERM (a first process ignores it unless it says otherwise), so that
  stopping a sandbox takes no ten-second grace.

Layer: runtimes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys

_CHUNK = 65536
_HEADER_TIMEOUT_S = 10.0


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy ``reader`` to ``writer`` until the end, then half-close ``writer``."""
    try:
        while True:
            data = await reader.read(_CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()


async def _port(reader: asyncio.StreamReader) -> int | None:
    """The port the first line asks for, or None for anything else."""
    try:
        line = await asyncio.wait_for(reader.readline(), _HEADER_TIMEOUT_S)
        port = int(line.strip())
    except (ValueError, OSError, asyncio.TimeoutError):
        return None
    return port if 0 < port < 65536 else None


async def _forward(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    port = await _port(reader)
    if port is None:
        writer.close()
        return
    try:
        inner_reader, inner_writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as exc:
        with contextlib.suppress(OSError):
            writer.write(f"ERR {exc.strerror or exc}\n".encode())
            await writer.drain()
        writer.close()
        return
    writer.write(b"OK\n")
    with contextlib.suppress(OSError):
        await writer.drain()
        await asyncio.gather(_pipe(reader, inner_writer), _pipe(inner_reader, writer))
    inner_writer.close()
    writer.close()


def _reap() -> None:
    """Collect every child that has exited (those of background commands land here)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


async def _serve(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = await asyncio.start_unix_server(_forward, path=path)
    os.chmod(path, 0o666)  # the host connects, whichever user it runs as
    stopped = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stopped.set)
    loop.add_signal_handler(signal.SIGINT, stopped.set)
    loop.add_signal_handler(signal.SIGCHLD, _reap)
    print(f"daemon: forwarding ports from {path}", flush=True)
    async with server:
        await stopped.wait()


if __name__ == "__main__":
    asyncio.run(_serve(sys.argv[1]))
