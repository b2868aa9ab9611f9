"""Child processes that a test stops with a signal, and that leave nothing running however the
test ends.

A background job of a non-interactive shell (``bash -c 'pytest ... & wait'``, CI runners, ``nohup``)
starts with SIGINT ignored, and children inherit that: a Ctrl-C sent to such a child does
nothing, and the test waits in vain. :func:`start_child` starts the child with SIGINT at its
default action, in a process group of its own; :func:`end_child`, for a teardown, stops it with
a signal and kills the whole group if anything is left (a server the child started included).

Example::

    process = start_child([sys.executable, "-m", "openenv_hub_cli.main", "serve", ...])
    try:
        process.send_signal(signal.SIGINT)
        output = process.communicate(timeout=60)[0]
    finally:
        end_child(process)
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["die_with_parent", "end_child", "live_processes", "start_child"]


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> None:
    """For ``preexec_fn``: the child is killed when the process that started it ends, however it
    ends (a pytest killed, or one that stopped on an internal error before its teardowns ran)."""
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _child_setup() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    die_with_parent()


def start_child(command: Sequence[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **options)`` with SIGINT at its default action, in a process
    group of its own (so :func:`end_child` can kill everything it started), killed if the test
    process ends first (:func:`die_with_parent`)."""
    return subprocess.Popen(
        command,
        start_new_session=True,
        preexec_fn=_child_setup,  # a signal's disposition and the parent-death signal only
        **options,
    )


def end_child(
    process: subprocess.Popen[Any], stop: signal.Signals = signal.SIGINT, *, timeout_s: float = 30
) -> None:
    """Stop ``process`` with ``stop`` unless it has exited, wait up to ``timeout_s``, then kill
    what is left of its process group; close its pipes. Never raises (it runs in teardowns)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(stop)
        with contextlib.suppress(subprocess.TimeoutExpired, ValueError):
            process.communicate(timeout=timeout_s)  # drained: a full pipe cannot hold it up
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout_s)
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def live_processes() -> dict[int, tuple[int, int]]:
    """Every process of the machine that has not exited (a zombie, waiting for a parent that
    may never reap it, is left out): its pid, and its parent's pid and process group."""
    live: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                live[int(entry.name)] = (int(fields[1]), int(fields[2]))
    return live
