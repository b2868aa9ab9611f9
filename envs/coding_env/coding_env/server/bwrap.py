"""How a sandbox is made: bubblewrap's command line, and what this machine offers it.

bubblewrap (``bwrap``) makes the sandbox in one of two modes:

* **user namespaces** (the server runs as an ordinary user): bwrap creates a user namespace,
  so the sandbox needs no privilege at all.
* **root** (the server runs as root): bwrap creates the namespaces with root's privilege; the
  interpreter then drops to an unprivileged user id of its own, unique to the session.

Either way the interpreter has its own PID, network, IPC and UTS namespaces (no network but a
loopback of its own; no other process visible), sees a read-only system (``/usr``, the Python
installation) with private, size-limited tmpfs mounts for ``/workspace``, ``/tmp`` and
``/dev/shm``, no environment variables of the server, and runs under the seccomp filter of
:mod:`coding_env.server.syscall_filter`. bwrap reports the sandbox's first process on
``--info-fd`` and waits on ``--block-fd`` until the server has put it in its cgroup.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from coding_env.server.cgroups import Hierarchy
from coding_env.server.settings import SandboxSettings

__all__ = [
    "IN_SANDBOX",
    "WORKDIR",
    "BwrapPipes",
    "Launcher",
    "Mechanism",
    "bwrap_command",
    "child_pid",
    "interpreter",
]

_HERE = Path(__file__).parent
SANDBOX_CODE = "/opt/coding-sandbox"
# The scripts run inside the sandbox (standard library only): host path -> sandbox path.
IN_SANDBOX = {_HERE / name: f"{SANDBOX_CODE}/{name}" for name in ("worker.py", "judge.py")}
WORKER_IN_SANDBOX = f"{SANDBOX_CODE}/worker.py"
WORKDIR = "/workspace"
SHM_SIZE_MB = 16
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
_MAX_INFO_BYTES = 4096


class Mechanism(str, Enum):
    """How sandboxes are made on this machine."""

    USER_NAMESPACES = "bubblewrap with user namespaces"
    ROOT = "bubblewrap as root, one unprivileged user per session"
    NONE = "none: unsafe_no_sandbox is set, code runs unconfined"


@dataclass(frozen=True)
class Launcher:
    """How this machine makes sandboxes, as :func:`coding_env.server.mechanism.detect` found.

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


def bwrap_command(
    settings: SandboxSettings, launcher: Launcher, *, seccomp_fd: int, info_fd: int, block_fd: int
) -> list[str]:
    """The full bwrap command line of one sandbox (nothing secret: it is visible in ``ps``)."""
    python = interpreter(settings)
    mechanism, bwrap = launcher.mechanism, launcher.bwrap
    args = [bwrap, "--die-with-parent", "--new-session", "--as-pid-1"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    if mechanism is Mechanism.USER_NAMESPACES:
        args += ["--unshare-user"] + (["--disable-userns"] if launcher.disable_userns else [])
    else:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += ["--seccomp", str(seccomp_fd), "--info-fd", str(info_fd), "--block-fd", str(block_fd)]
    args += ["--clearenv"]
    for key, value in sandbox_environment(python).items():
        args += ["--setenv", key, value]
    made: set[str] = set()
    for folder in _SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    # /dev and /tmp first, so that an interpreter installed under /tmp (a virtual environment in
    # a temporary checkout) is bound over the empty /tmp, not hidden by it.
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(SHM_SIZE_MB << 20)]
    args += ["--tmpfs", "/dev/shm"]
    args += ["--perms", "1777", "--size", str(settings.tmp_size_mb << 20), "--tmpfs", "/tmp"]
    made.update({"/dev", "/tmp"})
    binds = [*_ETC_FILES, *_python_roots(python), *settings.extra_ro_paths]
    for path in binds:
        if not os.path.exists(path):
            continue
        for parent in _parents(path):
            if parent not in made and not any(_under(parent, d) for d in _SYSTEM_DIRS):
                made.add(parent)
                args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", path, path]
    for parent in _parents(WORKER_IN_SANDBOX):
        args += ["--perms", "0755", "--dir", parent]
    for host, inside in IN_SANDBOX.items():
        args += ["--ro-bind", str(host), inside]
    args += ["--remount-ro", "/dev"]
    args += ["--perms", "1777", "--size", str(settings.workdir_size_mb << 20), "--tmpfs", WORKDIR]
    args += ["--remount-ro", "/", "--chdir", WORKDIR]
    return [*args, python, "-I", "-B", WORKER_IN_SANDBOX]


def interpreter(settings: SandboxSettings) -> str:
    return os.path.abspath(settings.python or sys.executable)


def sandbox_environment(python: str) -> dict[str, str]:
    bin_dir = os.path.dirname(python)
    return {
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": WORKDIR,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "USER": "sandbox",
        # One malloc arena per thread would reserve 64 MB of address space each.
        "MALLOC_ARENA_MAX": "2",
        "CODING_SANDBOX_WORKDIR": WORKDIR,
    }


def _python_roots(python: str) -> list[str]:
    """Host folders holding the interpreter and its libraries (outside the system dirs)."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    if python != os.path.abspath(sys.executable):
        # A virtual environment's folder, and the interpreter its python links to.
        candidates = {str(Path(python).parent.parent), str(Path(python).resolve().parent.parent)}
    roots = sorted({os.path.realpath(p) for p in candidates})
    return [r for r in roots if not any(_under(r, d) for d in _SYSTEM_DIRS)]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _parents(path: str) -> list[str]:
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
