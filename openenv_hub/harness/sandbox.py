"""A harness's sandbox: bubblewrap's namespaces, the seccomp filter and one cgroup bounding it as
a whole (the parts of :mod:`openenv_hub.sandbox`, as the coding environment's interpreter uses
them), with a network of its own that reaches two places only.

The sandbox's network namespace has nothing but its own loopback. Its first process
(:mod:`openenv_hub.harness.supervisor`) listens there on one port per relay and carries each
connection to a Unix socket the server bound into the sandbox: one leads to the capture proxy,
one to the tool bridge. A harness is pointed at ``http://127.0.0.1:PORT``; anything else it
tries fails (no route), and every name it looks up is refused by the supervisor's DNS and
reported in :attr:`HarnessSandbox.refused`. The seccomp filter takes ``AF_INET`` sockets here
(``bpf_program(inet=True)``: the loopback is all there is), and the cgroup's TCP buffer bound
(cgroup v1's ``memory.kmem.tcp.limit_in_bytes``) holds what they can keep.

The sandbox sees the system read-only, the harness's installation read-only, and two folders
of the server's read-write: the task's work folder at ``/workspace`` and the harness's home at
``/home/agent`` (its settings and sessions). Nothing else of the server: not the grader, not a
task's hidden tests, not another rollout. The harness runs as an unprivileged user of its own
(root mode) with limits on open files and file sizes; after each command the supervisor kills
every process the command left. Secrets (the session's key) reach a command in the ``run``
request's variables, never on a command line. What the sandbox holds, and bubblewrap's command
line making it, are :mod:`openenv_hub.harness.sandbox_layout`'s.

Layer: client.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from openenv_hub.harness.launch import SandboxUnavailable, give_back_uid, take_uid
from openenv_hub.harness.sandbox_layout import (
    HOME,
    WORKSPACE,
    HarnessLimits,
    Relay,
    SandboxLayout,
    give_folder,
    write_etc,
)
from openenv_hub.sandbox.bwrap import BwrapPipes, Launcher, Mechanism, child_pid
from openenv_hub.sandbox.cgroups import CgroupUnavailable, Group
from openenv_hub.sandbox.ipc_limits import limit_ipc
from openenv_hub.support.settings import named_variable

__all__ = ["HOME", "WORKSPACE", "HarnessLimits", "HarnessSandbox", "Relay", "RunResult"]

_MAX_LINE_BYTES = 1 << 20
_STARTERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="harness-sandbox-start")


@dataclass
class RunResult:
    """How a command ended: its exit code, whether it ran out of time, what it wrote."""

    exit_code: int
    timed_out: bool = False
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    error: str | None = None


@dataclass
class _Live:
    popen: subprocess.Popen[bytes]
    stderr: IO[bytes]
    group: Group | None
    uid: int | None
    messages: queue.Queue[dict[str, Any] | None] = field(default_factory=queue.Queue)


class HarnessSandbox:
    """One sandbox for one episode: :meth:`start`, then :meth:`run` commands, then :meth:`stop`.

    Args:
        launcher: How sandboxes are made here (:func:`openenv_hub.harness.launch.detect`).
        workspace: The task's work folder (``/workspace`` inside, read-write).
        home: The harness's home (``/home/agent`` inside, read-write).
        read_only: Host paths the harness needs (its installation), bound read-only.
        relays: The ways out (the capture proxy, the tool bridge).
        environment: Variables every command gets (nothing secret: visible in ``ps``).
        limits: The bounds.
        workspace_writable: False binds the work folder read-only and leaves its owner alone
            (a grading sandbox).
        mounts: More host folders, read-only, by their path inside (a task's hidden tests, in
            a grading sandbox only).
        writable_mounts: More host folders, read-write and handed to the sandbox's user, by
            their path inside (a grading sandbox's ``/logs``).
    """

    def __init__(
        self,
        launcher: Launcher,
        *,
        workspace: Path,
        home: Path,
        read_only: list[str],
        relays: list[Relay],
        environment: dict[str, str] | None = None,
        limits: HarnessLimits | None = None,
        workspace_writable: bool = True,
        mounts: dict[str, str] | None = None,
        writable_mounts: dict[str, str] | None = None,
    ) -> None:
        if launcher.mechanism is Mechanism.NONE:
            raise SandboxUnavailable("a harness runs only in a sandbox (unsafe_no_sandbox is set)")
        self.launcher = launcher
        self.layout = SandboxLayout(
            workspace=Path(workspace),
            home=Path(home),
            read_only=list(read_only),
            relays=list(relays),
            environment=dict(environment or {}),
            workspace_writable=workspace_writable,
            mounts=dict(mounts or {}),
            writable_mounts=dict(writable_mounts or {}),
        )
        self.limits = limits or HarnessLimits()
        self.refused: list[str] = []
        self._live: _Live | None = None
        self._etc: Path | None = None
        self._runs = 0
        self._on_event: Callable[[dict[str, Any]], None] | None = None

    @property
    def alive(self) -> bool:
        return self._live is not None and self._live.popen.poll() is None

    # -- start ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the sandbox and wait until its supervisor is ready."""
        self.stop()
        deadline = time.monotonic() + self.limits.start_timeout_s
        uid = take_uid() if self.launcher.mechanism is Mechanism.ROOT else None
        self._etc = Path(tempfile.mkdtemp(prefix="openenv-harness-etc-"))
        write_etc(self._etc, uid)
        layout = self.layout
        for folder in (layout.workspace, layout.home):
            folder.mkdir(parents=True, exist_ok=True)
        writable = [Path(p) for p in layout.writable_mounts.values()] + [layout.home]
        for folder in [layout.workspace, *writable] if layout.workspace_writable else writable:
            if uid is not None:
                give_folder(folder, uid)
        pipes = BwrapPipes(self.launcher.seccomp)
        stderr = tempfile.TemporaryFile(prefix="openenv-harness-")  # noqa: SIM115 - kept open
        group = self._make_group()
        command = self._command(pipes)

        def launch() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                start_new_session=True,
                env={"PATH": named_variable("PATH") or "/usr/bin:/bin"},
                cwd="/",
                pass_fds=pipes.child_ends,
            )

        try:
            # bwrap's --die-with-parent ends the sandbox when the *thread* that started it
            # ends: start it from a thread that lives as long as the process.
            popen = _STARTERS.submit(launch).result()
        except OSError as exc:
            pipes.close()
            stderr.close()
            if group is not None:
                group.remove()
            if uid is not None:
                give_back_uid(uid)
            raise SandboxUnavailable(f"could not run {self.launcher.bwrap}: {exc}") from exc
        self._live = _Live(popen, stderr, group, uid)
        threading.Thread(target=self._read, args=(self._live,), daemon=True).start()
        self._release(pipes, deadline)
        self._initialize(uid, deadline)

    def _make_group(self) -> Group | None:
        if self.launcher.cgroups is None:
            return None
        try:
            return self.launcher.cgroups.create(
                memory_bytes=self.limits.memory_mb << 20, max_tasks=self.limits.max_processes
            )
        except CgroupUnavailable as exc:
            raise SandboxUnavailable(str(exc)) from None

    def _command(self, pipes: BwrapPipes) -> list[str]:
        assert self._etc is not None
        return self.layout.command(self.launcher, pipes, self._etc, self.limits.tmp_size_mb << 20)

    def _release(self, pipes: BwrapPipes, deadline: float) -> None:
        """Put the sandbox in its cgroup and bound its IPC, then let it start."""
        live = self._live
        assert live is not None
        pipes.close_child_ends()
        try:
            child = child_pid(pipes.info_read, deadline)
            if child is None:
                raise SandboxUnavailable(f"bubblewrap ended: {self._stderr_tail()}")
            if live.group is not None:
                live.group.add(live.popen.pid)
                live.group.add(child)
            if self.launcher.mechanism is Mechanism.ROOT:
                limit_ipc(child, self.limits.memory_mb << 20)
            os.write(pipes.block_write, b"1")
        except OSError as exc:
            self.stop()
            raise SandboxUnavailable(f"the sandbox could not be bounded: {exc}") from None
        except SandboxUnavailable:
            self.stop()
            raise
        finally:
            pipes.close()

    def _initialize(self, uid: int | None, deadline: float) -> None:
        limits = {
            "max_open_files": self.limits.max_open_files,
            "max_file_size_bytes": self.limits.max_file_size_mb << 20,
        }
        relays = [{"port": relay.port, "socket": relay.inside} for relay in self.layout.relays]
        request = {"op": "init", "id": 0, "uid": uid, "relays": relays, "dns": True}
        self._send({**request, "limits": limits})
        reply = self._next(0, deadline)
        if reply is None or not reply.get("ready"):
            detail = reply or self._stderr_tail()
            self.stop()
            raise SandboxUnavailable(f"the harness's sandbox did not start: {detail}")

    # -- running commands ------------------------------------------------------------------

    def run(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str = WORKSPACE,
        timeout_s: float = 600.0,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> RunResult:
        """Run ``argv`` in the sandbox until it ends or ``timeout_s`` passes; every process it
        left is killed when it ends. ``on_event`` gets its output as it comes
        (``{"event": "output", "stream": ..., "text": ...}``) and refused names
        (``{"event": "refused", "kind": "dns", "name": ...}``)."""
        if not self.alive:
            raise SandboxUnavailable("the harness's sandbox is not running")
        self._runs += 1
        ident = self._runs
        variables = {**self.layout.variables(), **(env or {})}
        request = {"op": "run", "id": ident, "argv": argv, "env": variables, "cwd": cwd}
        request |= {"timeout_s": timeout_s, "max_output_bytes": self.limits.max_output_bytes}
        self._on_event = on_event
        result = RunResult(exit_code=-1)
        try:
            self._send(request)
            reply = self._next(ident, time.monotonic() + timeout_s + 30, result)
        finally:
            self._on_event = None
        if reply is None:
            self.stop()
            return RunResult(-9, True, result.stdout, result.stderr, error="the sandbox ended")
        result.exit_code = int(reply.get("exit_code", -1))
        result.timed_out = reply.get("timed_out") is True
        result.output_truncated = reply.get("output_truncated") is True
        result.error = reply.get("error") if isinstance(reply.get("error"), str) else None
        return result

    def _send(self, message: dict[str, Any]) -> None:
        live = self._live
        if live is None or live.popen.stdin is None:
            raise SandboxUnavailable("the harness's sandbox is not running")
        try:
            live.popen.stdin.write(json.dumps(message).encode() + b"\n")
            live.popen.stdin.flush()
        except OSError:
            raise SandboxUnavailable("the harness's sandbox ended") from None

    def _next(
        self, ident: int, deadline: float, result: RunResult | None = None
    ) -> dict[str, Any] | None:
        """The reply to request ``ident``; output on the way goes to ``result``. None: the
        sandbox ended or the time ran out."""
        live = self._live
        if live is None:
            return None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                message = live.messages.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if message is None:
                return None
            if message.get("event") == "refused":
                self._note_refused(message)
            elif message.get("id") != ident:
                continue
            elif message.get("event") == "output" and result is not None:
                self._note_output(message, result)
            elif "protocol_error" in message:
                raise SandboxUnavailable(f"the supervisor refused: {message['protocol_error']}")
            elif message.get("event") is None:
                return message

    def _note_refused(self, message: dict[str, Any]) -> None:
        name = str(message.get("name", ""))[:255]
        self.refused.append(name)
        if self._on_event is not None:
            self._on_event({"event": "refused", "kind": "dns", "name": name})

    def _note_output(self, message: dict[str, Any], result: RunResult) -> None:
        text = str(message.get("text", ""))
        stream = "stderr" if message.get("stream") == "stderr" else "stdout"
        setattr(result, stream, getattr(result, stream) + text)
        if self._on_event is not None:
            self._on_event({"event": "output", "stream": stream, "text": text})

    def _read(self, live: _Live) -> None:
        """Read the supervisor's lines into ``live.messages`` (None when it ends)."""
        assert live.popen.stdout is not None
        for line in live.popen.stdout:
            if len(line) > _MAX_LINE_BYTES:
                continue
            with contextlib.suppress(ValueError, RecursionError):
                message = json.loads(line)
                if isinstance(message, dict):
                    live.messages.put(message)
        live.messages.put(None)

    # -- stop ------------------------------------------------------------------------------

    def _stderr_tail(self) -> str:
        live = self._live
        if live is None:
            return ""
        with contextlib.suppress(OSError, ValueError):
            live.stderr.seek(0)
            return live.stderr.read(4000).decode(errors="replace").strip()
        return ""

    def stop(self) -> None:
        """Kill the sandbox and everything in it (idempotent)."""
        live, self._live = self._live, None
        if live is not None:
            if live.popen.poll() is None:
                live.popen.kill()
            if live.group is not None:
                live.group.remove()
            with contextlib.suppress(subprocess.TimeoutExpired):
                live.popen.wait(timeout=10)
            for stream in (live.popen.stdin, live.popen.stdout, live.stderr):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
            if live.uid is not None:
                give_back_uid(live.uid)
        if self._etc is not None:
            shutil.rmtree(self._etc, ignore_errors=True)
            self._etc = None

    def __enter__(self) -> HarnessSandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
