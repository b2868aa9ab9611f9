"""System V IPC limits inside a sandbox's own IPC namespace (root mode).

``kernel.shmmax``, ``kernel.shmall``, ``kernel.shmmni`` and ``kernel.msgmni`` belong to each IPC
namespace, and its owner may set them. The server (root) sets them for a new sandbox before the
sandbox runs anything: a short-lived thread of its own enters the sandbox's IPC namespace (a
thread's namespaces are its own) and writes them through ``/proc/sys``, which shows the values
of the namespace of whoever opens it. Where bubblewrap made a user namespace (the server is not
root), the namespace's root is not mapped and the values cannot be written; the cgroup's memory
bound, which counts shared memory too, is then what holds.

Layer: services.
"""

from __future__ import annotations

import ctypes
import os
import threading

__all__ = ["limit_ipc"]

_CLONE_NEWIPC = 0x08000000
SHM_SEGMENTS = 64
MESSAGE_QUEUES = 16


def limit_ipc(pid: int, memory_bytes: int) -> None:
    """Bound SysV shared memory in the IPC namespace of ``pid`` to ``memory_bytes`` in all.

    Raises:
        OSError: the namespace could not be entered or a value could not be written.
    """
    page = os.sysconf("SC_PAGE_SIZE")
    values = {
        "shmmax": memory_bytes,
        "shmall": max(memory_bytes // page, 1),
        "shmmni": SHM_SEGMENTS,
        "msgmni": MESSAGE_QUEUES,
    }
    failure: list[OSError] = []

    def enter_and_write() -> None:
        try:
            _enter(pid)
            for name, value in values.items():
                with open(f"/proc/sys/kernel/{name}", "w") as file:
                    file.write(str(value))
        except OSError as exc:
            failure.append(exc)

    thread = threading.Thread(target=enter_and_write, name="sandbox-ipc-limits")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def _enter(pid: int) -> None:
    fd = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if hasattr(os, "setns"):  # Python 3.12+
            os.setns(fd, _CLONE_NEWIPC)
            return
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, _CLONE_NEWIPC) != 0:
            error = ctypes.get_errno()
            raise OSError(error, os.strerror(error))
    finally:
        os.close(fd)
