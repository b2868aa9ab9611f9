"""How the coding environment's sandbox is made: bubblewrap's command line for its interpreter.

The parts every sandbox shares (the mechanism, the namespaces, the read-only system, the
descriptors bwrap is started with) are :mod:`openenv_hub.sandbox.bwrap`'s; see there for the
two modes. The interpreter sees, besides the read-only system and the Python installation,
private, size-limited tmpfs mounts for ``/workspace``, ``/tmp`` and ``/dev/shm``, and runs under
the seccomp filter of :mod:`openenv_hub.sandbox.syscall_filter` (``AF_UNIX`` sockets only).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from coding_env.server.settings import SandboxSettings
from openenv_hub.sandbox.bwrap import (
    BwrapPipes,
    Launcher,
    Mechanism,
    child_pid,
    namespace_arguments,
    parents,
    python_roots,
    system_arguments,
)

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


def bwrap_command(
    settings: SandboxSettings, launcher: Launcher, *, seccomp_fd: int, info_fd: int, block_fd: int
) -> list[str]:
    """The full bwrap command line of one sandbox (nothing secret: it is visible in ``ps``)."""
    python = interpreter(settings)
    args = namespace_arguments(
        launcher,
        seccomp_fd=seccomp_fd,
        info_fd=info_fd,
        block_fd=block_fd,
        environment=sandbox_environment(python),
    )
    read_only = [*python_roots(python), *settings.extra_ro_paths]
    args += system_arguments(settings.tmp_size_mb << 20, read_only)
    for parent in parents(WORKER_IN_SANDBOX):
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
