"""Removes this process's containers and services when it dies, however it dies.

A process that starts containers also starts one reaper: ``python -m
openenv_hub.providers._reaper OWNER``, in a session of its own, reading a pipe whose only
writer is the starting process. When that process exits (normally, by a signal, or killed with
SIGKILL) the kernel closes the pipe; the reaper wakes up, removes every container and Swarm
service labelled ``openenv-hub.owner=OWNER``, and exits. After a normal exit the providers have
already stopped at ``atexit`` and the reaper finds nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from openenv_hub.providers import labels

__all__ = ["ensure_reaper", "reap"]

_lock = threading.Lock()
_started: dict[int, subprocess.Popen[bytes]] = {}


def ensure_reaper() -> None:
    """Start this process's reaper, once (again after a fork)."""
    pid = os.getpid()
    with _lock:
        if pid in _started and _started[pid].poll() is None:
            return
        _started[pid] = subprocess.Popen(
            [sys.executable, "-m", "openenv_hub.providers._reaper", labels.owner_id()],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C for the process group leaves it watching
        )


def reap(owner: str) -> int:
    """Remove the containers and services of ``owner``; return how many."""
    import docker

    client = docker.from_env()
    removed = 0
    selector = {"label": [f"{labels.MANAGED}=true", f"{labels.OWNER}={owner}"]}
    try:
        services = client.services.list(filters=selector)
    except docker.errors.APIError:  # not a swarm manager: no services
        services = []
    for service in services:
        service.remove()
        removed += 1
    for container in client.containers.list(all=True, filters=selector):
        try:
            container.remove(force=True)
            removed += 1
        except docker.errors.NotFound:
            pass
    return removed


def _main(owner: str) -> None:
    sys.stdin.buffer.read()  # returns when the owner's end of the pipe closes
    reap(owner)


if __name__ == "__main__":
    _main(sys.argv[1])
