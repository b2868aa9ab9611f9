"""The client processes of ``sessions.py``: each opens its share of the sessions, says so,
waits for the go, steps them all at once and sends back latencies, errors and its CPU time.

``lean`` (the default) drives them with :mod:`ws_load`'s protocol, a few microseconds of CPU a
step; ``websockets`` with the ``websockets`` library's client (runs 1 to 8 of the README).
"""

from __future__ import annotations

import asyncio
import os
import time
from multiprocessing.connection import Connection
from typing import Any

import ws_load
from child_processes import die_with_parent  # tests/ (sessions.py puts it on the path)

RESET = '{"type": "reset", "data": {}}'
STEP = '{"type": "step", "data": {"message": "hello"}}'
OPEN_AT_ONCE = 256  # connections being opened at a time, under the server's listen backlog


def client_process(
    url: str,
    sessions: int,
    steps: int,
    pipe: Connection,
    cpus: set[int] | None = None,
    kind: str = "lean",
    sources: list[str] | None = None,
) -> None:
    """Open ``sessions`` sessions, say so, wait for the go, step them all, send the results.
    ``sources``: the local addresses to connect from, in turn (none: the kernel's choice)."""
    die_with_parent()  # stepped no more once the script has ended, however it ended
    if cpus:
        os.sched_setaffinity(0, cpus)
    ws_url = url.replace("http://", "ws://") + "/ws"
    if kind == "lean":
        asyncio.run(_lean_client(ws_url, sessions, steps, pipe, sources or []))
    else:
        asyncio.run(_websockets_client(ws_url, sessions, steps, pipe))


async def _lean_client(
    url: str, sessions: int, steps: int, pipe: Connection, sources: list[str]
) -> None:
    run = ws_load.Run(steps)
    gate = asyncio.Semaphore(OPEN_AT_ONCE)
    open_errors: list[str] = []

    async def open_one(index: int) -> ws_load.Session | None:
        source = sources[index % len(sources)] if sources else None
        async with gate:
            try:
                return await ws_load.open_session(url, RESET, STEP, run, 300, source=source)
            except Exception as exc:  # counted: the table shows failures
                open_errors.append(f"open: {type(exc).__name__}: {exc}"[:300])
                return None

    opened = [s for s in await asyncio.gather(*(open_one(i) for i in range(sessions))) if s]
    pipe.send(("ready", len(opened), open_errors[:3], len(open_errors)))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # the go
    cpu_started = time.process_time()
    await ws_load.step_all(opened, run)
    cpu = time.process_time() - cpu_started
    pipe.send(("done", run.latencies, len(run.errors), run.errors[:3], cpu))
    for session in opened:
        session.close()
    await asyncio.sleep(0.5)
    pipe.send(("closed",))


async def _websockets_client(url: str, sessions: int, steps: int, pipe: Connection) -> None:
    from websockets.asyncio.client import connect

    errors: list[str] = []
    gate = asyncio.Semaphore(OPEN_AT_ONCE)

    async def open_one() -> Any:
        async with gate:
            try:
                ws = await connect(url, open_timeout=300, compression=None, max_size=None)
                await ws.send(RESET)
                reply = await asyncio.wait_for(ws.recv(), 300)
            except Exception as exc:  # counted: the table shows failures
                errors.append(f"open: {type(exc).__name__}: {exc}"[:300])
                return None
            if '"type":"observation"' not in str(reply).replace(" ", ""):
                errors.append(f"reset: {str(reply)[:300]}")
            return ws

    sockets = [ws for ws in await asyncio.gather(*(open_one() for _ in range(sessions))) if ws]
    pipe.send(("ready", len(sockets), errors[:3], len(errors)))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # the go
    latencies: list[float] = []
    step_errors = 0
    cpu_started = time.process_time()

    async def drive(ws: Any) -> None:
        nonlocal step_errors
        for _ in range(steps):
            started = time.perf_counter()
            try:
                await ws.send(STEP)
                reply = await asyncio.wait_for(ws.recv(), 300)
            except Exception as exc:
                errors.append(f"step: {type(exc).__name__}: {exc}"[:300])
                step_errors += 1
                return
            latencies.append(time.perf_counter() - started)
            if '"type":"error"' in str(reply).replace(" ", ""):
                errors.append(f"step: {str(reply)[:300]}")
                step_errors += 1

    await asyncio.gather(*(drive(ws) for ws in sockets))
    cpu = time.process_time() - cpu_started
    pipe.send(("done", latencies, step_errors, errors[:3], cpu))
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    pipe.send(("closed",))
