"""Removes this process's containers and services when it dies, however it dies.

A process that starts containers also starts one reaper: ``python -m
openenv_hub.runtimes._reaper OWNER``, in a session of its own, reading a pipe whose only
writer is the starting process. When that process exits (normally, by a signal, or killed with
SIGKILL) the kernel closes the pipe; the reaper wakes up, removes every container and Swarm
service labelled ``openenv-hub.owner=OWNER``, and exits. After a normal exit the providers have
already stopped at ``atexit`` and the reaper finds nothing.
"""

from __future__ import annotations

import os
import sys
import threading

import openenv_hub.runtimes.labels as labels
from openenv_hub.support.settings import environment

__all__ = ["ensure_reaper", "reap", "spawn_watcher", "tell_watcher"]

_lock = threading.Lock()
_started: dict[int, tuple[int, int]] = {}  # this pid -> (the reaper's pid, our end of its pipe)
# (this pid, module) -> (the watcher's pid, our end of its pipe, the lines told)
_watchers: dict[tuple[int, str], tuple[int, int, set[str]]] = {}


def ensure_reaper() -> None:
    """Start this process's reaper, once (again after a fork, or if it died).

    It is spawned without a ``subprocess.Popen`` object, which would warn at exit that a child
    is still running: outliving this process is the reaper's job.
    """
    pid = os.getpid()
    with _lock:
        if pid in _started:
            reaper, write_end = _started[pid]
            if os.waitpid(reaper, os.WNOHANG) == (0, 0):
                return  # still watching
            os.close(write_end)
        read_end, write_end = os.pipe()  # both ends are closed in children started later
        try:
            reaper = spawn_watcher(read_end, "openenv_hub.runtimes._reaper")
        finally:
            os.close(read_end)
        _started[pid] = (reaper, write_end)


def spawn_watcher(read_end: int, module: str) -> int:
    """Start ``python -m module OWNER`` in a session of its own, reading ``read_end`` as its
    standard input; return its pid."""
    argv = [sys.executable, "-m", module, labels.owner_id()]
    actions = [
        (os.POSIX_SPAWN_DUP2, read_end, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:  # a session of its own: a Ctrl-C for this process group leaves it watching
        return os.posix_spawn(
            sys.executable, argv, environment(), file_actions=actions, setsid=True
        )
    except NotImplementedError:  # no POSIX_SPAWN_SETSID: a process group of its own will do
        return os.posix_spawn(
            sys.executable, argv, environment(), file_actions=actions, setpgroup=0
        )


def tell_watcher(module: str, line: str) -> None:
    """Make sure this process's watcher ``python -m module OWNER`` runs (started once, again
    after a fork or if it died, then told every line again), and tell it ``line`` once.

    A watcher reads its lines (places to clean up, as JSON, secrets included: a pipe is neither
    a command line nor the environment) until this process's end of the pipe closes, when this
    process exits however it exits, and then cleans up what this process left there.
    """
    key = (os.getpid(), module)
    with _lock:
        found = _watchers.get(key)
        if found is not None and os.waitpid(found[0], os.WNOHANG) != (0, 0):
            os.close(found[1])  # it died: start another, and tell it everything again
            found = None
        if found is None:
            read_end, write_end = os.pipe()
            try:
                watcher = spawn_watcher(read_end, module)
            finally:
                os.close(read_end)
            found = _watchers[key] = (watcher, write_end, set())
        if line not in found[2]:
            os.write(found[1], line.encode() + b"\n")
            found[2].add(line)


def reap(owner: str) -> int:
    """Remove the containers and services of ``owner``; return how many."""
    from openenv_hub.docker.labelled import labelled_objects, remove_object

    found = labelled_objects({labels.MANAGED: "true", labels.OWNER: owner})
    return sum(remove_object(item.kind, item.id) for item in found)


def _main(owner: str) -> None:
    sys.stdin.buffer.read()  # returns when the owner's end of the pipe closes
    reap(owner)


if __name__ == "__main__":
    _main(sys.argv[1])
