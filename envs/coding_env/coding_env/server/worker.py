"""The interpreter that runs inside the sandbox: one per session, holding the session's names.

It is started as a script (standard library only) by :mod:`coding_env.server.sandbox` and
speaks JSON lines: one request on its standard input, one reply on its standard output. Before
it reads the first request it moves those two channels to private descriptors and points 0, 1
and 2 at ``/dev/null``; during a step, 1 and 2 are in-memory files whose size the kernel caps
(``RLIMIT_FSIZE``), so the agent's ``print``, ``os.write(1, ...)`` and child processes are all
captured and bounded.

The first request (``init``) sets the kernel limits that every later step runs under, and, when
the sandbox was started by root, drops to the session's own unprivileged user. The agent's code
never runs before that. Its ``role`` says what the interpreter serves: a session (``run``,
``list_files``) or, in a sandbox started for one grading, a single ``grade`` (see ``judge.py``).
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import linecache
import math
import os
import resource
import select
import signal
import sys
import threading
import time
import traceback
import types
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's folder out
import judge

WORKDIR = os.environ.get("CODING_SANDBOX_WORKDIR", "/workspace")
_LIMITS = {
    "memory_bytes": resource.RLIMIT_AS,
    "max_processes": resource.RLIMIT_NPROC,
    "max_open_files": resource.RLIMIT_NOFILE,
    "max_file_size_bytes": resource.RLIMIT_FSIZE,
}


class Channel:
    """The request/reply descriptors, moved away from 0/1/2."""

    def __init__(self) -> None:
        self.read_fd = os.dup(0)
        self.write_fd = os.dup(1)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        self._reader = os.fdopen(self.read_fd, "rb")

    def close(self) -> None:
        """Close both ends (the grader's candidate does, before it runs any cell)."""
        self._reader.close()
        os.close(self.write_fd)

    def receive(self) -> dict[str, Any] | None:
        line = self._reader.readline()
        return json.loads(line) if line else None

    def send(self, reply: dict[str, Any]) -> None:
        data = (json.dumps(reply, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view) :]


def initialize(request: dict[str, Any]) -> dict[str, Any]:
    """Drop to the session's user (root mode), then set the limits; returns the ready reply."""
    uid = request.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    for name, which in _LIMITS.items():
        value = request.get("limits", {}).get(name)
        if value is not None:
            resource.setrlimit(which, (int(value), int(value)))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # Writes past RLIMIT_FSIZE fail with EFBIG instead of killing the interpreter.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    os.makedirs(WORKDIR, exist_ok=True)
    os.chdir(WORKDIR)
    return {"ready": True, "pid": os.getpid(), "uid": os.getuid()}


class Capture:
    """File descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``) captured for one step."""

    def __init__(self) -> None:
        self.files = [_memory_file(name) for name in ("stdout", "stderr")]
        self._saved = (sys.stdout, sys.stderr)
        for target, fd in zip((1, 2), self.files, strict=True):
            os.dup2(fd, target)
        sys.stdout, sys.stderr = _text(1), _text(2)

    def finish(self, max_bytes: int) -> tuple[str, str, bool]:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = self._saved
        null = os.open(os.devnull, os.O_RDWR)
        for target in (1, 2):
            os.dup2(null, target)
        os.close(null)
        texts, truncated = [], False
        for fd in self.files:
            size = os.fstat(fd).st_size
            os.lseek(fd, 0, os.SEEK_SET)
            data = os.read(fd, max_bytes) if max_bytes else b""
            os.close(fd)
            truncated = truncated or size > max_bytes
            texts.append(data.decode("utf-8", errors="replace"))
        return texts[0], texts[1], truncated


def _memory_file(name: str) -> int:
    if hasattr(os, "memfd_create"):
        return os.memfd_create(name)
    import tempfile

    return os.dup(tempfile.TemporaryFile().fileno())


def _text(fd: int) -> io.TextIOWrapper:
    raw = io.FileIO(fd, "w", closefd=False)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace")


class Session:
    """The agent's names, kept from one step to the next: the ``__main__`` module's, so that
    ``import __main__`` and pickling a function defined in a cell find them."""

    def __init__(self) -> None:
        main = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        self.names: dict[str, Any] = main.__dict__
        self.names["__builtins__"] = __builtins__
        self.cells = 0

    def run(self, request: dict[str, Any]) -> dict[str, Any]:
        self.cells += 1
        filename = f"<cell-{self.cells}>"
        code = request["code"]
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        _limit_cpu(request.get("cpu_time_s"))
        reply: dict[str, Any] = {"exit_code": 0, "value": None, "error": None}
        capture = Capture()
        started = time.perf_counter()
        try:
            value = self._execute(code, filename)
            if value is not None:
                reply["value"] = _short_repr(value, request.get("max_value_chars", 2000))
        except SystemExit as exc:
            reply["exit_code"] = _exit_code(exc.code)
        except BaseException as exc:  # the agent's error, reported; the session goes on
            reply["exit_code"] = 1
            reply["error"] = _describe(exc)
        reply["duration_s"] = time.perf_counter() - started
        out, err, truncated = capture.finish(int(request.get("max_output_bytes", 65536)))
        reply.update(stdout=out, stderr=err, output_truncated=truncated)
        reply["memory_exceeded"] = _is_memory_error(reply["error"])
        return reply

    def _execute(self, code: str, filename: str) -> Any:
        tree = ast.parse(code, filename, "exec")
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
            tree.body.pop()
        exec(compile(tree, filename, "exec"), self.names)
        if last is None:
            return None
        return eval(compile(ast.Expression(last.value), filename, "eval"), self.names)


def _limit_cpu(cpu_time_s: float | None) -> None:
    """CPU seconds this step may use: the soft RLIMIT_CPU, counted from what is used so far."""
    if not cpu_time_s:
        return
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(used + cpu_time_s)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _short_repr(value: Any, limit: int) -> str:
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<repr() failed: {type(exc).__name__}: {exc}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _describe(exc: BaseException) -> dict[str, Any]:
    """Type, message and the traceback lines that belong to the agent's own cells."""
    if isinstance(exc, SyntaxError):
        lines = traceback.format_exception_only(type(exc), exc)
    else:
        frames = [
            f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<cell-")
        ]
        lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return {
        "type": type(exc).__name__,
        "message": str(exc)[:2000],
        "traceback": [part for line in lines for part in line.rstrip("\n").split("\n")][-60:],
    }


def _is_memory_error(error: dict[str, Any] | None) -> bool:
    return error is not None and error["type"] == "MemoryError"


def list_files(request: dict[str, Any]) -> dict[str, Any]:
    limit = int(request.get("max_entries", 1000))
    files: list[dict[str, Any]] = []
    for root, dirs, names in os.walk(WORKDIR):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                size = os.lstat(path).st_size
            except OSError:
                continue
            files.append({"path": os.path.relpath(path, WORKDIR), "size": size})
            if len(files) >= limit:
                return {"files": files, "truncated": True}
    return {"files": files, "truncated": False}


def _wait_as_init(child: int, channel: Channel) -> None:
    """PID 1 of the namespace: reap orphans until the interpreter ends, then end with it.

    The interpreter runs as PID 2 because the kernel shields a namespace's PID 1 from
    signals it has no handler for, ``SIGXCPU`` (the CPU limit) included. This process set the
    limits before it forked, so it is bound by them too; when it exits, the kernel kills
    everything left in the namespace.
    """
    os.close(channel.write_fd)
    threading.Thread(target=_end_with_the_server, args=(channel.read_fd,), daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def _end_with_the_server(read_fd: int) -> None:
    """End the sandbox once the server's end of the request pipe is closed, as when it dies.

    bwrap's ``--die-with-parent`` cannot reach this process once it has changed user (the
    kernel drops a parent-death signal that bwrap, without ``CAP_KILL``, may not send), so an
    interpreter stuck in a loop would outlive a killed server. Polling for nothing but a hang-up
    wakes this thread only then; killing the process group (and, as PID 1, exiting) ends all.
    """
    poller = select.poll()
    poller.register(read_fd, 0)  # POLLHUP and POLLERR are reported whatever was asked for
    while not poller.poll():
        pass
    with contextlib.suppress(OSError):
        os.killpg(os.getpgrp(), signal.SIGKILL)
    os._exit(1)


def run_cells(cells: list[str]) -> dict[str, Any]:
    """A fresh session's names after running ``cells`` in order, output discarded."""
    session = Session()
    for code in cells:
        session.run({"code": code})
    return session.names


def main() -> None:
    channel = Channel()
    first = channel.receive()
    if first is None:
        return
    ready = initialize(first)
    child = os.fork()
    if child:
        _wait_as_init(child, channel)
    if first.get("role") == "grader":
        candidate = judge.prepare(channel.close, run_cells)
        channel.send({**ready, "pid": os.getpid(), "id": first.get("id")})
        request = channel.receive()
        if request is not None and request.get("op") == "grade":
            channel.send({**judge.grade(request, candidate), "id": request.get("id")})
        return
    channel.send({**ready, "pid": os.getpid(), "id": first.get("id")})
    session = Session()
    handlers = {"run": session.run, "list_files": list_files}
    while True:
        request = channel.receive()
        if request is None or request.get("op") == "exit":
            return
        handler = handlers.get(request.get("op", ""))
        reply = (
            handler(request) if handler else {"protocol_error": f"unknown op {request.get('op')!r}"}
        )
        channel.send({**reply, "id": request.get("id")})


if __name__ == "__main__":
    main()
