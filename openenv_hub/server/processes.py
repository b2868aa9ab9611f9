"""One address served by several processes: ``serve_app(app, workers=N)`` and
``openenv serve --workers N``.

The parent binds the address once per process, each socket with ``SO_REUSEPORT`` (on Linux: the
kernel spreads new connections over them by a hash of the client's address and port), forks
the processes and waits. A connection stays with the process that accepted it, so a WebSocket
session lives in one process for its whole life. Each process also listens on a Unix socket of
its own, in a folder only this user may enter, through which the others pass it the requests
that name one of its sessions (:mod:`openenv_hub.server.process_routing`).

Each process holds its own sessions and its own limits: ``max_concurrent_envs`` bounds the
sessions of each process, not their sum. The Sessions view, the watch stream and ``/metadata``
show the sessions of the process that answers (the web UI is served by process 0); every answer
says which process gave it in the ``X-OpenEnv-Worker`` header (``1/4``: the second of four).

The processes are forked, so the app is built once, before, and shared until written. If one of
them ends, the parent stops the others and exits with an error (a supervisor such as systemd or
a container's restart policy starts the server again). Ctrl-C or SIGTERM stops all of them;
one still running 10 s past uvicorn's graceful shutdown is killed.

Layer: server.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.server.process_routing import ProcessRouter
from openenv_hub.server.session_keys import set_key_prefix
from openenv_hub.transport.uvicorn_serving import tune_collector

__all__ = ["MAX_WORKERS", "serve_processes", "this_process"]

logger = logging.getLogger("uvicorn.error")

MAX_WORKERS = 64
"""The most processes one server may run (a machine's cores, with room)."""

_PR_SET_PDEATHSIG = 1
_BACKLOG = 4096  # connections waiting to be accepted, per process
_STOP_MARGIN_S = 10.0  # past uvicorn's graceful shutdown, before a process is killed


class _This:
    """Which process of how many this one is (``None`` in a server of one process)."""

    value: tuple[int, int] | None = None


def this_process() -> tuple[int, int] | None:
    """``(index, count)`` in a process of a server of several, else ``None``."""
    return _This.value


def check_workers(workers: int) -> None:
    """Refuse a number of processes this platform or this module cannot run."""
    if not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ConfigurationError(
            f"workers={workers!r}: give a whole number from 1 to {MAX_WORKERS} (the processes "
            "that serve the address)"
        )
    if workers > 1 and not hasattr(os, "fork"):
        raise ConfigurationError(
            f"workers={workers}: serving from several processes needs fork(), which this "
            "platform lacks; serve with workers=1"
        )


def serve_processes(
    app: Any, *, host: str, port: int, workers: int, options: dict[str, Any], log_level: str
) -> None:
    """Serve ``app`` (built) on ``host:port`` from ``workers`` processes with uvicorn's
    ``options``, until Ctrl-C or SIGTERM; exits 1 if a process ended on its own."""
    check_workers(workers)
    listening = _listening_sockets(host, port, workers)
    private = Path(tempfile.mkdtemp(prefix="openenv-workers-"))  # mode 0700: this user's only
    paths = [str(private / f"{index}.sock") for index in range(workers)]
    gc.freeze()  # what the app holds now is shared by the processes until one writes it
    children: dict[int, int] = {}
    try:
        for index in range(workers):
            pid = os.fork()
            if pid == 0:  # the process; it never returns into the caller's code
                code = 1
                try:
                    code = _serve_one(app, index, listening, paths, options, log_level)
                except BaseException:
                    logger.exception("openenv-hub server: process %d failed", index)
                finally:
                    os._exit(code)
            children[pid] = index
        for sock in listening:
            sock.close()
        logger.info(
            "openenv-hub server: %d processes on http://%s:%d (pids %s)",
            workers,
            host,
            port,
            ", ".join(map(str, children)),
        )
        failed = _supervise(children)
    finally:
        grace = float(options.get("timeout_graceful_shutdown") or 0) + _STOP_MARGIN_S
        _stop_all(children, grace)
        shutil.rmtree(private, ignore_errors=True)
    if failed:
        raise SystemExit(1)


def _stop_all(children: dict[int, int], grace_s: float) -> None:
    """SIGTERM to the processes still running, and SIGKILL to those still running after
    ``grace_s`` (uvicorn's graceful shutdown, with a margin for closing many connections)."""
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    waiting = set(children)
    while waiting:
        for pid in list(waiting):
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == 0:
                    continue
            waiting.discard(pid)
        if waiting and time.monotonic() > deadline:
            for pid in waiting:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        elif waiting:
            time.sleep(0.05)


def _listening_sockets(host: str, port: int, workers: int) -> list[socket.socket]:
    """A socket a process, bound to ``host:port`` with ``SO_REUSEPORT``; first, a plain bind
    checks that no other server holds the port (one with ``SO_REUSEPORT`` would otherwise
    share it with us)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ConfigurationError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}; stop the other server "
                "or pick another port"
            ) from None
    spread = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
    sockets = []
    for _ in range(workers if spread else 1):
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if spread:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(_BACKLOG)
        sock.set_inheritable(True)
        sockets.append(sock)
    return sockets * (1 if spread else workers)  # without SO_REUSEPORT: one socket, shared


def _serve_one(
    app: Any,
    index: int,
    listening: list[socket.socket],
    paths: list[str],
    options: dict[str, Any],
    log_level: str,
) -> int:
    """Process ``index``: its own listening socket and its private one, until stopped."""
    import uvicorn

    _die_with_parent()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    mine = listening[index]
    for sock in listening:
        if sock is not mine:
            sock.close()
    _This.value = (index, len(paths))
    set_key_prefix(f"{index}.")
    private = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    private.bind(paths[index])
    os.chmod(paths[index], 0o600)
    private.listen(_BACKLOG)
    routed = ProcessRouter(app, index=index, paths=paths)
    config = uvicorn.Config(routed, log_level=log_level, **options)
    server = uvicorn.Server(config)
    tune_collector()
    server.run(sockets=[mine, private])
    return 0 if server.started else 3


def _supervise(children: dict[int, int]) -> bool:
    """Wait for the processes; on SIGTERM or SIGINT pass SIGTERM on and wait for them all.
    Returns whether one ended on its own (the others are then stopped)."""
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        while children:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            index = children.pop(pid, None)
            if index is None or stopping:
                continue
            logger.error(
                "openenv-hub server: process %d (pid %d) ended with status %d; stopping the others",
                index,
                pid,
                os.waitstatus_to_exitcode(status),
            )
            stop(signal.SIGTERM, None)
            stopping = True
            return True
        return False
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _die_with_parent() -> None:
    """Ask Linux to kill this process if the parent dies (the parent, ending normally, stops
    and waits for its processes first: this is for a parent killed)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
