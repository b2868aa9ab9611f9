"""Ports and health on this machine: a free port, whether one is taken, waiting for ``/health``.

Every runtime, the Docker image checks and the command line use these, so "is it up yet" means
the same everywhere: ``GET /health`` answers 200.

Layer: core.

Example:
    >>> port = free_port()
    >>> port_in_use("127.0.0.1", port)
    False
"""

from __future__ import annotations

import os
import socket
import time
from typing import TYPE_CHECKING

import httpx

from openenv_hub.errors import ConnectError

if TYPE_CHECKING:
    from openenv_hub.support.progress import Progress

__all__ = ["free_port", "port_in_use", "wait_for_health"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """Whether a server could not listen on ``host:port``: another socket listens there.

    It binds as uvicorn (asyncio's ``create_server``) does, with ``SO_REUSEADDR`` on POSIX, so
    that the connections a stopped server leaves in TIME_WAIT (for a minute or so after it
    stopped with clients connected) do not count: a bind without it fails then, uvicorn's not.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        if os.name == "posix":  # on Windows the option lets a bind take a port in use
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def wait_for_health(
    base_url: str, *, timeout_s: float, alive: object = None, progress: Progress | None = None
) -> None:
    """Poll ``/health`` until it answers 200; ``alive()`` returning False stops early. Each poll
    updates ``progress`` (see :mod:`openenv_hub.support.progress`), if given.

    Raises:
        ConnectError: The server exited (``alive()`` said so) or did not answer in time.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if callable(alive) and not alive():
            raise ConnectError(f"The server for {base_url} exited before answering", url=base_url)
        try:
            if httpx.get(f"{base_url}/health", timeout=2.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if progress is not None:
            progress.update()
        time.sleep(0.1)
    raise ConnectError(f"{base_url}/health did not answer within {timeout_s:g} s", url=base_url)
