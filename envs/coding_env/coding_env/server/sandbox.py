"""One sandbox: an interpreter in its own namespaces and cgroup, spoken to in JSON lines.

A sandbox is made by bubblewrap (see :mod:`coding_env.server.bwrap`) and plays one of two roles:
a session's interpreter, which keeps the agent's names from step to step, or a grader, which
runs one grading and is then thrown away (see :mod:`coding_env.server.grader`). Before the
sandbox runs anything, the server puts its processes in a cgroup of their own
(:mod:`openenv_hub.sandbox.cgroups`) and, as root, bounds System V IPC in its IPC namespace
(:mod:`openenv_hub.sandbox.ipc_limits`); the interpreter then sets its own kernel limits and drops
its privileges before the first request it serves (see ``worker.py``). The server kills the
whole PID namespace when a request runs out of wall time.
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
import tempfile
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import IO, Any

from coding_env.server.bwrap import (
    BwrapPipes,
    Launcher,
    Mechanism,
    bwrap_command,
    child_pid,
    interpreter,
    sandbox_environment,
)
from coding_env.server.settings import SandboxSettings
from openenv_hub.sandbox.cgroups import CgroupUnavailable, Group
from openenv_hub.sandbox.ipc_limits import limit_ipc

__all__ = [
    "Launcher",
    "Mechanism",
    "Role",
    "Sandbox",
    "SandboxDied",
    "SandboxError",
    "SandboxTimeout",
]

WORKER = Path(__file__).with_name("worker.py")
_MAX_REPLY_BYTES = 16 * 1024 * 1024


class SandboxError(Exception):
    """The sandbox could not do what was asked."""


class SandboxDied(SandboxError):
    """The interpreter ended (killed by a limit, or it exited); its names are gone."""

    def __init__(
        self, message: str, *, signal_number: int | None = None, memory_exceeded: bool = False
    ) -> None:
        super().__init__(message)
        self.signal_number = signal_number
        self.memory_exceeded = memory_exceeded


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


class Role(str, Enum):
    """What a sandbox is for: it decides which requests its interpreter serves."""

    SESSION = "session"  # the agent's interpreter: run, list_files
    GRADER = "grader"  # one grading, in a process the agent never ran code in


@dataclass
class _Process:
    popen: subprocess.Popen[bytes]
    stderr: IO[bytes]
    uid: int | None
    group: Group | None
    workdir: str | None = None  # unsafe_no_sandbox only: a host folder, removed on stop


class Sandbox:
    """A live interpreter in its own sandbox, spoken to with JSON requests and replies.

    Args:
        settings: The limits.
        launcher: From :func:`coding_env.server.mechanism.detect`.
        role: What the interpreter serves.
    """

    def __init__(
        self, settings: SandboxSettings, launcher: Launcher, role: Role = Role.SESSION
    ) -> None:
        self.settings = settings
        self.launcher = launcher
        self.mechanism = launcher.mechanism
        self.role = role
        self._process: _Process | None = None
        self._buffer = b""
        self._requests = 0
        self.started_in_s = 0.0

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.popen.poll() is None

    def oom_kills(self) -> int:
        """Processes the kernel killed so far for this sandbox's memory bound (0 without one)."""
        process = self._process
        return process.group.oom_kills() if process and process.group else 0

    def start(self) -> None:
        """Start the interpreter and wait until it is ready (bounded by ``start_timeout_s``)."""
        self.stop()
        started = time.perf_counter()
        deadline = time.monotonic() + self.settings.start_timeout_s
        pipes = self._pipes()
        uid = _USER_IDS.take() if self.mechanism is Mechanism.ROOT else None
        stderr = tempfile.TemporaryFile(prefix="coding-sandbox-")  # noqa: SIM115 - kept open
        environment = self._launch_environment()
        try:
            group = self._make_group()
            popen = subprocess.Popen(
                self._command(pipes),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                env=environment,
                cwd="/",
                pass_fds=pipes.child_ends if pipes else (),
            )
        except (OSError, SandboxError) as exc:
            stderr.close()
            if pipes:
                pipes.close()
            if uid is not None:
                _USER_IDS.give_back(uid)
            if self.mechanism is Mechanism.NONE:
                shutil.rmtree(environment["CODING_SANDBOX_WORKDIR"], ignore_errors=True)
            if isinstance(exc, SandboxError):
                raise
            raise SandboxError(f"could not run {self.launcher.bwrap}: {exc}") from exc
        self._process = _Process(
            popen, stderr, uid, group, environment.get("CODING_SANDBOX_WORKDIR")
        )
        self._buffer = b""
        if pipes:
            self._release(pipes, deadline)
        self._initialize(uid, deadline)
        self.started_in_s = time.perf_counter() - started

    def _pipes(self) -> BwrapPipes | None:
        if self.mechanism is Mechanism.NONE:
            return None
        if not self.launcher.seccomp:
            raise SandboxError("no seccomp filter was given: sandboxes do not start without one")
        return BwrapPipes(self.launcher.seccomp)

    def _make_group(self) -> Group | None:
        hierarchy = self.launcher.cgroups
        if hierarchy is None or self.mechanism is Mechanism.NONE:
            return None
        limits = self.settings.worker_limits()
        try:
            # bubblewrap's own process is in the group too: one task more than the sandbox's.
            return hierarchy.create(
                memory_bytes=limits["memory_bytes"], max_tasks=limits["max_processes"] + 1
            )
        except CgroupUnavailable as exc:
            raise SandboxError(str(exc)) from None

    def _release(self, pipes: BwrapPipes, deadline: float) -> None:
        """Put the sandbox in its cgroup and bound its IPC, then let it run its interpreter."""
        process = self._process
        assert process is not None
        pipes.close_child_ends()
        try:
            child = child_pid(pipes.info_read, deadline)
            if child is None:
                raise self._died()
            if process.group is not None:
                process.group.add(process.popen.pid)
                process.group.add(child)
            if self.mechanism is Mechanism.ROOT:
                limit_ipc(child, self.settings.worker_limits()["memory_bytes"])
            os.write(pipes.block_write, b"1")
        except OSError as exc:
            self.stop()
            raise SandboxError(f"the sandbox could not be bounded: {exc}") from None
        except SandboxDied as exc:
            raise SandboxError(f"the sandbox did not start: {exc}") from None
        finally:
            pipes.close()

    def _initialize(self, uid: int | None, deadline: float) -> None:
        init = {
            "op": "init",
            "role": self.role.value,
            "uid": uid,
            "limits": self.settings.worker_limits(),
        }
        if self.mechanism is Mechanism.NONE:
            init["limits"].pop("max_processes")  # would count every process of the server's user
        try:
            reply = self.request(init, max(deadline - time.monotonic(), 0.1))
        except SandboxDied as exc:
            raise SandboxError(f"the sandbox did not start: {exc}") from None
        if not reply.get("ready"):
            self.stop()
            raise SandboxError(f"the sandbox did not start: {reply}")

    def _command(self, pipes: BwrapPipes | None) -> list[str]:
        if pipes is None:
            return [interpreter(self.settings), "-I", "-B", str(WORKER)]
        return bwrap_command(
            self.settings,
            self.launcher,
            seccomp_fd=pipes.seccomp_read,
            info_fd=pipes.info_write,
            block_fd=pipes.block_read,
        )

    def _launch_environment(self) -> dict[str, str]:
        if self.mechanism is not Mechanism.NONE:
            return {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return {
            **sandbox_environment(interpreter(self.settings)),
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
        self._requests += 1
        try:
            process.popen.stdin.write(
                json.dumps({**message, "id": self._requests}).encode() + b"\n"
            )
            process.popen.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._died() from None
        deadline = time.monotonic() + timeout_s
        while True:  # lines the agent's code wrote to the channel itself carry no current id
            reply = self._reply(process, deadline, timeout_s)
            if reply.get("id") == self._requests:
                return reply

    def _reply(self, process: _Process, deadline: float, timeout_s: float) -> dict[str, Any]:
        """The next line the interpreter sent, as a JSON object."""
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
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict):
            self.stop()
            raise SandboxDied("the interpreter sent a malformed reply; it was killed")
        if "protocol_error" in reply:
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
        out_of_memory = process.group is not None and process.group.oom_kills() > 0
        self.stop()
        if out_of_memory:
            bound = self.settings.memory_mb
            return SandboxDied(
                f"the interpreter was killed: the sandbox reached its memory bound ({bound} MB, "
                "shared memory and files in /workspace, /tmp and /dev/shm included)",
                signal_number=signal.SIGKILL,
                memory_exceeded=True,
            )
        return _death(code, detail)

    def stop(self) -> None:
        """Kill the sandbox and everything in it (its PID namespace and its cgroup)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.popen.poll() is None:
            process.popen.kill()  # bwrap; --die-with-parent and PID 1 take the rest down
        if process.group is not None:
            for pid in process.group.pids():
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.popen.wait(timeout=10)
        if self.mechanism is Mechanism.NONE:
            _kill_group(process.popen.pid)
        for stream in (process.popen.stdin, process.popen.stdout, process.stderr):
            if stream is not None:
                stream.close()
        if process.group is not None:
            process.group.remove()  # left for the next server's start when it cannot be
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
            "SIGSYS": "it made a system call of another architecture (SIGSYS)",
        }.get(name, f"it was ended by {name}")
        return SandboxDied(f"the interpreter ended: {reason}", signal_number=number)
    suffix = f": {detail}" if detail else ""
    return SandboxDied(f"the interpreter exited with status {code}{suffix}")
