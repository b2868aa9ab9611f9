"""The parts of a bubblewrap sandbox that every kind of sandbox shares: the mechanism this
machine offers, the namespaces, the read-only system, and the descriptors bwrap is started with.

bubblewrap (``bwrap``) makes a sandbox in one of two modes:

* **user namespaces** (the server runs as an ordinary user): bwrap creates a user namespace,
  so the sandbox needs no privilege at all.
* **root** (the server runs as root): bwrap creates the namespaces with root's privilege; the
  sandbox's first process then drops to an unprivileged user id of its own.

Either way the sandbox has its own PID, network, IPC and UTS namespaces (no network but a
loopback of its own; no other process visible), sees a read-only system (``/usr`` and the
folders named) with private, size-limited tmpfs mounts for ``/tmp`` and ``/dev/shm``, no
environment variables of the server, and runs under a seccomp filter
(:mod:`openenv_hub.sandbox.syscall_filter`). bwrap reports the sandbox's first process on
``--info-fd`` and waits on ``--block-fd`` until the server has put it in its cgroup.

The coding environment's interpreter (``coding_env.server.bwrap``) and a harness's sandbox
(:mod:`openenv_hub.harness.sandbox`) build their command lines from these parts.

Layer: services.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from openenv_hub.sandbox.cgroups import Hierarchy

__all__ = [
    "ETC_FILES",
    "SHM_SIZE_MB",
    "SYSTEM_DIRS",
    "BwrapPipes",
    "Launcher",
    "Mechanism",
    "child_pid",
    "namespace_arguments",
    "parents",
    "python_roots",
    "system_arguments",
    "under",
]

SHM_SIZE_MB = 16
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
_MAX_INFO_BYTES = 4096


class Mechanism(str, Enum):
    """How sandboxes are made on this machine."""

    USER_NAMESPACES = "bubblewrap with user namespaces"
    ROOT = "bubblewrap as root, one unprivileged user per session"
    NONE = "none: unsafe_no_sandbox is set, code runs unconfined"


@dataclass(frozen=True)
class Launcher:
    """How this machine makes sandboxes, as a detection found (e.g.
    ``coding_env.server.mechanism.detect``).

    Attributes:
        mechanism: The kind of sandbox.
        bwrap: Path of the bwrap executable.
        disable_userns: Whether the sandbox is also kept from making user namespaces of its
            own (bwrap ``--disable-userns``; needs a writable ``/proc/sys``, which Docker's
            containers do not have). The seccomp filter refuses them in every mode.
        seccomp: The compiled seccomp filter (empty only without a sandbox).
        cgroups: Where each sandbox's cgroup is made; None: memory is bounded per process only.
        no_cgroup_reason: Why there is no cgroup, when there is none.
    """

    mechanism: Mechanism
    bwrap: str = "bwrap"
    disable_userns: bool = True
    seccomp: bytes = b""
    cgroups: Hierarchy | None = None
    no_cgroup_reason: str = ""


def namespace_arguments(
    launcher: Launcher,
    *,
    seccomp_fd: int,
    info_fd: int,
    block_fd: int,
    environment: dict[str, str],
    capabilities: Iterable[str] = (),
) -> list[str]:
    """bwrap's first arguments: new namespaces (network included: a loopback only), the seccomp
    filter and the start-up descriptors, and ``environment`` as the sandbox's only variables
    (visible in ``ps``: nothing secret). ``capabilities`` are kept by the sandbox's first
    process in root mode besides ``CAP_SETUID`` and ``CAP_SETGID`` (it drops them all when it
    takes its unprivileged user id)."""
    args = [launcher.bwrap, "--die-with-parent", "--new-session", "--as-pid-1"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    if launcher.mechanism is Mechanism.USER_NAMESPACES:
        args += ["--unshare-user"] + (["--disable-userns"] if launcher.disable_userns else [])
    else:
        for capability in ("CAP_SETUID", "CAP_SETGID", *capabilities):
            args += ["--cap-add", capability]
    args += ["--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--block-fd", str(block_fd)]
    args += ["--clearenv"]
    for key, value in environment.items():
        args += ["--setenv", key, value]
    return args


def system_arguments(tmp_size_bytes: int, read_only: Iterable[str]) -> list[str]:
    """The read-only system (:data:`SYSTEM_DIRS`, :data:`ETC_FILES` and ``read_only`` paths,
    each with its parent folders), ``/dev``, and tmpfs mounts for ``/dev/shm`` and ``/tmp``."""
    args: list[str] = []
    for folder in SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    # /dev and /tmp first, so that a path under /tmp (a virtual environment in a temporary
    # checkout) is bound over the empty /tmp, not hidden by it.
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(SHM_SIZE_MB << 20)]
    args += ["--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(tmp_size_bytes), "--tmpfs", "/tmp"]
    made = {"/dev", "/tmp"}
    for path in [*ETC_FILES, *read_only]:
        if not os.path.exists(path):
            continue
        for parent in parents(path):
            if parent not in made and not any(under(parent, d) for d in SYSTEM_DIRS):
                made.add(parent)
                args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", path, path]
    return args


def python_roots(python: str) -> list[str]:
    """Host folders holding the interpreter ``python`` and its libraries (outside the system
    dirs): this process's installation, or a virtual environment and the Python it links to."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    if python != os.path.abspath(sys.executable):
        candidates = {str(Path(python).parent.parent), str(Path(python).resolve().parent.parent)}
    roots = sorted({os.path.realpath(p) for p in candidates})
    return [r for r in roots if not any(under(r, d) for d in SYSTEM_DIRS)]


def under(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def parents(path: str) -> list[str]:
    """The folders above ``path``, outermost first (``/a/b/c`` -> ``/a``, ``/a/b``)."""
    parts = Path(path).parts[1:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


class BwrapPipes:
    """The descriptors bubblewrap is started with: the seccomp program (written whole before
    bwrap starts), ``--info-fd`` (the sandbox's first process) and ``--block-fd`` (go)."""

    def __init__(self, program: bytes) -> None:
        if not program:
            raise ValueError("no seccomp filter: sandboxes do not start without one")
        self.seccomp_read, seccomp_write = os.pipe()
        try:
            os.write(seccomp_write, program)  # a few hundred bytes: well within a pipe's buffer
        finally:
            os.close(seccomp_write)
        self.info_read, self.info_write = os.pipe()
        self.block_read, self.block_write = os.pipe()
        self._open = {self.seccomp_read, self.info_read, self.info_write}
        self._open |= {self.block_read, self.block_write}

    @property
    def child_ends(self) -> tuple[int, int, int]:
        return self.seccomp_read, self.info_write, self.block_read

    def close_child_ends(self) -> None:
        self._close(*self.child_ends)

    def close(self) -> None:
        self._close(*self._open)

    def _close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)


def child_pid(fd: int, deadline: float) -> int | None:
    """The sandbox's first process, from bwrap's ``--info-fd`` JSON; None if bwrap ended."""
    data = b""
    while len(data) < _MAX_INFO_BYTES:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise OSError("bubblewrap did not report its sandbox in time")
        chunk = os.read(fd, _MAX_INFO_BYTES)
        if not chunk:
            return None
        data += chunk
        with contextlib.suppress(ValueError):
            pid = json.loads(data)["child-pid"]
            if isinstance(pid, int) and pid > 0:
                return pid
    raise OSError("bubblewrap reported its sandbox in a form this server does not read")
