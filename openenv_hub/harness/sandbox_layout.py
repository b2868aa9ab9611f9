"""What a harness's sandbox holds and how bubblewrap is told to make it: the folders it sees
(the system and the harness's installation read-only, the work folder at ``/workspace``, the
harness's home at ``/home/agent``), the Unix sockets of its ways out under ``/run/openenv``,
the few files of its ``/etc``, and the bounds it is made with.

Layer: client.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.sandbox.bwrap import (
    BwrapPipes,
    Launcher,
    namespace_arguments,
    parents,
    python_roots,
    system_arguments,
)

__all__ = [
    "HOME",
    "WORKSPACE",
    "HarnessLimits",
    "Relay",
    "SandboxLayout",
    "give_folder",
    "supervisor_python",
    "write_etc",
]

WORKSPACE = "/workspace"
HOME = "/home/agent"
SUPERVISOR = Path(__file__).with_name("supervisor.py")
SUPERVISOR_IN_SANDBOX = "/opt/openenv-harness/supervisor.py"
SOCKETS_IN_SANDBOX = "/run/openenv"


@dataclass(frozen=True)
class HarnessLimits:
    """What bounds a harness's sandbox.

    Attributes:
        memory_mb: Memory of the whole sandbox (its cgroup: processes, page cache, tmpfs, and on
            cgroup v1 a sixteenth more for TCP buffers).
        max_processes: Processes and threads of the whole sandbox (the cgroup's ``pids.max``).
        max_open_files: Open files per process.
        max_file_size_mb: The largest file a process may write.
        tmp_size_mb: Size of the private ``/tmp``.
        max_output_bytes: Output of one command kept (the rest is dropped).
        start_timeout_s: Time for the sandbox to be ready.
    """

    memory_mb: int = 4096
    max_processes: int = 512
    max_open_files: int = 4096
    max_file_size_mb: int = 256
    tmp_size_mb: int = 512
    max_output_bytes: int = 1 << 20
    start_timeout_s: float = 60.0


@dataclass(frozen=True)
class Relay:
    """One way out of the sandbox: ``127.0.0.1:port`` inside leads to the Unix socket
    ``socket`` of the server (named ``name`` inside: ``/run/openenv/NAME.sock``)."""

    name: str
    port: int
    socket: str

    @property
    def inside(self) -> str:
        """The socket's path inside the sandbox."""
        return f"{SOCKETS_IN_SANDBOX}/{self.name}.sock"


@dataclass
class SandboxLayout:
    """The folders and ways out of one sandbox (see :class:`HarnessSandbox`'s arguments)."""

    workspace: Path
    home: Path
    read_only: list[str] = field(default_factory=list)
    relays: list[Relay] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    workspace_writable: bool = True
    mounts: dict[str, str] = field(default_factory=dict)
    writable_mounts: dict[str, str] = field(default_factory=dict)

    def variables(self) -> dict[str, str]:
        """The variables every process of the sandbox starts with."""
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": HOME,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "USER": "agent",
            **self.environment,
        }

    def command(
        self, launcher: Launcher, pipes: BwrapPipes, etc: Path, tmp_bytes: int
    ) -> list[str]:
        """bubblewrap's command line making the sandbox and starting its supervisor (``etc``:
        the folder of the files :func:`write_etc` wrote)."""
        python = supervisor_python()
        args = namespace_arguments(
            launcher,
            seccomp_fd=pipes.seccomp_read,
            info_fd=pipes.info_write,
            block_fd=pipes.block_read,
            environment=self.variables(),
            capabilities=("CAP_NET_BIND_SERVICE",),  # port 53 for the DNS that refuses
        )
        args += system_arguments(tmp_bytes, [*python_roots(python), *self.read_only])
        args += ["--proc", "/proc"]
        for name in sorted(os.listdir(etc)):
            args += ["--ro-bind", str(etc / name), f"/etc/{name}"]
        for parent in parents(SUPERVISOR_IN_SANDBOX):
            args += ["--perms", "0755", "--dir", parent]
        args += ["--ro-bind", str(SUPERVISOR), SUPERVISOR_IN_SANDBOX]
        args += ["--perms", "0755", "--dir", SOCKETS_IN_SANDBOX]
        for relay in self.relays:
            args += ["--bind", relay.socket, relay.inside]
        args += ["--remount-ro", "/dev"]
        for inside, host in sorted(self.mounts.items()):
            args += ["--ro-bind", host, inside]
        for inside, host in sorted(self.writable_mounts.items()):
            args += ["--bind", host, inside]
        args += ["--perms", "0755", "--dir", os.path.dirname(HOME)]
        bind = "--bind" if self.workspace_writable else "--ro-bind"
        args += [bind, str(self.workspace), WORKSPACE, "--bind", str(self.home), HOME]
        args += ["--remount-ro", "/", "--chdir", WORKSPACE]
        return [*args, python, "-I", "-B", SUPERVISOR_IN_SANDBOX]


def supervisor_python() -> str:
    """The Python that runs the supervisor: the system's, else this process's."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.path.exists(candidate):
            return candidate
    return os.path.abspath(sys.executable)


def give_folder(folder: Path, uid: int) -> None:
    """Hand ``folder`` and what is in it to the sandbox's user (not following links)."""
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(root, name), uid, uid)
    os.chown(folder, uid, uid)


def write_etc(folder: Path, uid: int | None) -> None:
    """The few files of ``/etc`` a harness reads: who it is, and where names resolve."""
    user = os.getuid() if uid is None else uid
    (folder / "passwd").write_text(
        f"root:x:0:0:root:/root:/bin/sh\nagent:x:{user}:{user}:agent:{HOME}:/bin/sh\n"
    )
    (folder / "group").write_text(f"root:x:0:\nagent:x:{user}:\n")
    (folder / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    (folder / "resolv.conf").write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
    (folder / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files dns\n")
