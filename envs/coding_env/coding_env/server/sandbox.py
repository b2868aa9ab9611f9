"""One session's sandbox: an interpreter in its own namespaces, under kernel limits.

The sandbox is made by bubblewrap (``bwrap``), in one of two modes:

* **user namespaces** (the server runs as an ordinary user): bwrap creates a user namespace,
  so the sandbox needs no privilege at all. Its process count is charged to that namespace
  alone, so sessions cannot starve each other or the server.
* **root** (the server runs as root): bwrap creates the namespaces with root's privilege; the
  interpreter then drops to an unprivileged user id of its own, unique to the session.

Either way the interpreter has its own PID, network, IPC and UTS namespaces (no network but a
loopback of its own; no other process visible), sees a read-only system (``/usr``, the Python
installation) with private, size-limited tmpfs mounts for ``/workspace`` and ``/tmp``, no
environment variables of the server, and limits on address space, processes and threads, open
files and file size that it sets on itself before any agent code runs (see ``worker.py``).
The server kills the whole PID namespace when a step runs out of wall time.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import IO, Any

from coding_env.server.settings import SandboxSettings

__all__ = [
    "Launcher",
    "Mechanism",
    "Sandbox",
    "SandboxDied",
    "SandboxError",
    "SandboxTimeout",
    "bwrap_command",
]

WORKER = Path(__file__).with_name("worker.py")
WORKER_IN_SANDBOX = "/opt/coding-sandbox/worker.py"
WORKDIR = "/workspace"
_MAX_REPLY_BYTES = 16 * 1024 * 1024
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


class Mechanism(str, Enum):
    """How sandboxes are made on this machine."""

    USER_NAMESPACES = "bubblewrap with user namespaces"
    ROOT = "bubblewrap as root, one unprivileged user per session"
    NONE = "none: unsafe_no_sandbox is set, code runs unconfined"


class SandboxError(Exception):
    """The sandbox could not do what was asked."""


class SandboxDied(SandboxError):
    """The interpreter ended (killed by a limit, or it exited); its names are gone."""

    def __init__(self, message: str, *, signal_number: int | None = None) -> None:
        super().__init__(message)
        self.signal_number = signal_number


class SandboxTimeout(SandboxDied):
    """A request outlived its wall time; the sandbox was killed."""


class _UserIds:
    """Unprivileged user ids for root mode, one per live sandbox of this process.

    Ids are reused last-in-line: the processes of a killed sandbox may take a moment to go,
    and until they do they count against the process limit of their user id.
    """

    def __init__(self) -> None:
        self._base = 1_600_000_000 + (os.getpid() % 60_000) * 4096
        self._free = collections.deque(range(4096))
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            if not self._free:
                raise SandboxError("no free sandbox user ids (4096 sandboxes are running)")
            return self._base + self._free.popleft()

    def give_back(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid - self._base)


_USER_IDS = _UserIds()


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


@dataclass(frozen=True)
class Launcher:
    """How this machine makes sandboxes, as :func:`coding_env.server.mechanism.detect` found.

    Attributes:
        mechanism: The kind of sandbox.
        bwrap: Path of the bwrap executable.
        disable_userns: Whether the sandbox is also kept from making user namespaces of its
            own (bwrap ``--disable-userns``; needs a writable ``/proc/sys``, which Docker's
            containers do not have).
    """

    mechanism: Mechanism
    bwrap: str = "bwrap"
    disable_userns: bool = True


def bwrap_command(settings: SandboxSettings, launcher: Launcher) -> list[str]:
    """The full bwrap command line of one sandbox (nothing secret: it is visible in ``ps``)."""
    python = _interpreter(settings)
    mechanism, bwrap = launcher.mechanism, launcher.bwrap
    args = [bwrap, "--die-with-parent", "--new-session", "--as-pid-1"]
    args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    if mechanism is Mechanism.USER_NAMESPACES:
        args += ["--unshare-user"] + (["--disable-userns"] if launcher.disable_userns else [])
    else:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    args += ["--clearenv"]
    for key, value in _sandbox_environment(python).items():
        args += ["--setenv", key, value]
    made: set[str] = set()
    for folder in _SYSTEM_DIRS:
        if os.path.islink(folder):
            args += ["--symlink", os.readlink(folder), folder]
        elif os.path.isdir(folder):
            args += ["--ro-bind", folder, folder]
    # /dev and /tmp first, so that an interpreter installed under /tmp (a virtual environment in
    # a temporary checkout) is bound over the empty /tmp, not hidden by it.
    args += ["--dev", "/dev", "--perms", "1777", "--size", str(16 << 20), "--tmpfs", "/dev/shm"]
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
    args += ["--ro-bind", str(WORKER), WORKER_IN_SANDBOX]
    args += ["--remount-ro", "/dev"]
    args += ["--perms", "1777", "--size", str(settings.workdir_size_mb << 20), "--tmpfs", WORKDIR]
    args += ["--remount-ro", "/", "--chdir", WORKDIR]
    return [*args, python, "-I", "-B", WORKER_IN_SANDBOX]


def _interpreter(settings: SandboxSettings) -> str:
    return os.path.abspath(settings.python or sys.executable)


def _sandbox_environment(python: str) -> dict[str, str]:
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


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    stderr: IO[bytes]
    uid: int | None
    workdir: str | None = None  # unsafe_no_sandbox only: a host folder, removed on stop


class Sandbox:
    """A live interpreter in its own sandbox, spoken to with JSON requests and replies.

    Args:
        settings: The limits.
        launcher: From :func:`coding_env.server.mechanism.detect`.
    """

    def __init__(self, settings: SandboxSettings, launcher: Launcher) -> None:
        self.settings = settings
        self.launcher = launcher
        self.mechanism = launcher.mechanism
        self._process: _Process | None = None
        self._buffer = b""
        self.started_in_s = 0.0

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.popen.poll() is None

    def start(self) -> None:
        """Start the interpreter and wait until it is ready (bounded by ``start_timeout_s``)."""
        self.stop()
        started = time.perf_counter()
        uid = _USER_IDS.take() if self.mechanism is Mechanism.ROOT else None
        stderr = tempfile.TemporaryFile(prefix="coding-sandbox-")  # noqa: SIM115 - kept open
        environment = self._launch_environment()
        try:
            popen = subprocess.Popen(
                self._command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                env=environment,
                cwd="/",
            )
        except OSError as exc:
            stderr.close()
            if uid is not None:
                _USER_IDS.give_back(uid)
            if self.mechanism is Mechanism.NONE:
                shutil.rmtree(environment["CODING_SANDBOX_WORKDIR"], ignore_errors=True)
            raise SandboxError(f"could not run {self.launcher.bwrap}: {exc}") from exc
        self._process = _Process(popen, stderr, uid, environment.get("CODING_SANDBOX_WORKDIR"))
        self._buffer = b""
        init = {"op": "init", "uid": uid, "limits": self.settings.worker_limits()}
        if self.mechanism is Mechanism.NONE:
            init["limits"].pop("max_processes")  # would count every process of the server's user
        try:
            reply = self.request(init, self.settings.start_timeout_s)
        except SandboxDied as exc:
            raise SandboxError(f"the sandbox did not start: {exc}") from None
        if not reply.get("ready"):
            self.stop()
            raise SandboxError(f"the sandbox did not start: {reply}")
        self.started_in_s = time.perf_counter() - started

    def _command(self) -> list[str]:
        if self.mechanism is Mechanism.NONE:
            return [_interpreter(self.settings), "-I", "-B", str(WORKER)]
        return bwrap_command(self.settings, self.launcher)

    def _launch_environment(self) -> dict[str, str]:
        if self.mechanism is not Mechanism.NONE:
            return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return {
            **_sandbox_environment(_interpreter(self.settings)),
            "CODING_SANDBOX_WORKDIR": str(Path(tempfile.mkdtemp(prefix="coding-unsafe-"))),
        }

    def request(self, message: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """Send one request and wait at most ``timeout_s`` for its reply.

        Raises:
            SandboxTimeout: no reply in time; the sandbox was killed.
            SandboxDied: the interpreter ended before replying.
        """
        process = self._process
        if process is None:
            raise SandboxDied("the interpreter is not running")
        if process.popen.poll() is not None:
            raise self._died()
        assert process.popen.stdin is not None
        try:
            process.popen.stdin.write(json.dumps(message).encode() + b"\n")
            process.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None
        return self._reply(process, time.monotonic() + timeout_s, timeout_s)

    def _reply(self, process: _Process, deadline: float, timeout_s: float) -> dict[str, Any]:
        assert process.popen.stdout is not None
        fd = process.popen.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                self.stop()
                raise SandboxTimeout(f"no reply within {timeout_s:g} s; the sandbox was killed")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._died()
            self._buffer += chunk
            if len(self._buffer) > _MAX_REPLY_BYTES:
                self.stop()
                raise SandboxDied("the interpreter sent an oversized reply; it was killed")
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except ValueError:
            self.stop()
            raise SandboxDied("the interpreter sent a malformed reply; it was killed") from None
        if not isinstance(reply, dict) or "protocol_error" in reply:
            raise SandboxError(f"the interpreter refused the request: {reply}")
        return reply

    def _died(self) -> SandboxDied:
        """Collect the ended interpreter and say how it ended."""
        process = self._process
        assert process is not None
        try:
            code = process.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.stop()
            return SandboxDied("the interpreter stopped answering; it was killed")
        process.stderr.seek(0)
        detail = process.stderr.read(2000).decode(errors="replace").strip()
        self.stop()
        return _death(code, detail)

    def stop(self) -> None:
        """Kill the sandbox and everything in it (its PID namespace dies with it)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.popen.poll() is None:
            process.popen.kill()  # bwrap; --die-with-parent and PID 1 take the rest down
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=10)
        if self.mechanism is Mechanism.NONE:
            _kill_group(process.popen.pid)
        for stream in (process.popen.stdin, process.popen.stdout, process.stderr):
            if stream is not None:
                stream.close()
        if process.uid is not None:
            _USER_IDS.give_back(process.uid)
        if process.workdir is not None:
            shutil.rmtree(process.workdir, ignore_errors=True)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _death(code: int, detail: str) -> SandboxDied:
    # bwrap exits with the interpreter's status; a signal shows as 128 + n or as -n.
    number = -code if code < 0 else code - 128 if code > 128 else None
    if number is not None and number in signal.valid_signals():
        name = signal.Signals(number).name
        reason = {
            "SIGXCPU": "it used up its CPU time",
            "SIGKILL": "it was killed (SIGKILL)",
            "SIGSEGV": "it crashed (SIGSEGV)",
            "SIGXFSZ": "it exceeded the file size limit",
        }.get(name, f"it was ended by {name}")
        return SandboxDied(f"the interpreter ended: {reason}", signal_number=number)
    suffix = f": {detail}" if detail else ""
    return SandboxDied(f"the interpreter exited with status {code}{suffix}")
