"""The escape suite: each test is one attempt to break out of the sandbox or its limits.

Every test asserts that the attempt was contained and that the server still serves. The suite
runs against the server in this process and against the Space image (``target`` fixture); the
benchmark ``benchmarks/coding.py`` runs the same attempts (``ATTEMPTS``) against smolagents'
``LocalPythonExecutor``.
"""

from __future__ import annotations

import secrets
import socket
import threading
import time
from typing import Any

from coding_env import CodeAction
from coding_support import LIMITS, SECRET_VARIABLE, Target

FORK_BOMB = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""

COUNT_FORKS = """
import os, time
children, refused = [], None
try:
    for _ in range(10_000):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    refused = type(exc).__name__
for pid in children:
    os.kill(pid, 9)
len(children), refused
"""

MEMORY_BOMB = """
hoard = []
while True:
    hoard.append(bytearray(64 * 1024 * 1024))
"""

BUSY_THREADS = """
import threading, time
def spin():
    while True:
        pass
for _ in range(8):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(3600)
"""

GIGABYTE_OF_OUTPUT = """
import sys
chunk = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(chunk)
"""


def test_fork_bomb(target: Target) -> None:
    with target.client().sync() as env:
        env.reset()
        counted = env.step(CodeAction(code=COUNT_FORKS)).observation
        forks, refused = eval(counted.result)  # a tuple of an int and a name
        assert forks < LIMITS["max_processes"] and refused == "BlockingIOError", counted
        started = time.monotonic()
        bomb = env.step(CodeAction(code=FORK_BOMB)).observation
        assert bomb.timed_out and bomb.context_lost, bomb
        assert time.monotonic() - started < LIMITS["step_timeout_s"] + 10
        assert env.step(CodeAction(code="'still here'")).observation.result == "'still here'"
    target.assert_serves()


def test_memory_bomb(target: Target) -> None:
    with target.client().sync() as env:
        env.reset()
        env.step(CodeAction(code="kept = 'before the bomb'"))
        huge = env.step(CodeAction(code="bytearray(8 * 1024 ** 3)")).observation
        assert huge.memory_exceeded and huge.error.type == "MemoryError", huge
        hoard = env.step(CodeAction(code=MEMORY_BOMB)).observation
        assert hoard.memory_exceeded and not hoard.context_lost, hoard
        assert (
            env.step(CodeAction(code="del hoard; kept")).observation.result == "'before the bomb'"
        )
    target.assert_serves()


def test_infinite_loop(target: Target) -> None:
    with target.client().sync() as env:
        env.reset()
        cpu = "import resource as r\nu = r.getrusage(r.RUSAGE_SELF)\nr.getrlimit(r.RLIMIT_CPU)[0] - (u.ru_utime + u.ru_stime)"
        left = float(env.step(CodeAction(code=cpu)).observation.result)
        assert 0 < left <= LIMITS["cpu_time_s"] + 1  # the kernel's CPU limit for this step
        started = time.monotonic()
        loop = env.step(CodeAction(code="while True:\n    pass")).observation
        # CPU time runs out first on an idle machine, wall time on a loaded one.
        assert loop.timed_out and loop.context_lost, loop
        assert "CPU time" in loop.message or "wall time" in loop.message
        assert time.monotonic() - started < LIMITS["step_timeout_s"] + 10
    target.assert_serves()


def test_busy_threads(target: Target) -> None:
    with target.client().sync() as env:
        env.reset()
        started = time.monotonic()
        busy = env.step(CodeAction(code=BUSY_THREADS)).observation
        assert busy.timed_out and busy.context_lost, busy
        assert time.monotonic() - started < LIMITS["step_timeout_s"] + 10
    target.assert_serves()


def test_gigabyte_of_output(target: Target) -> None:
    observation: Any = target.run(GIGABYTE_OF_OUTPUT)
    assert observation.output_truncated, observation.message
    assert len(observation.stdout.encode()) <= 65536
    assert observation.error.type == "OSError" and "too large" in observation.error.message
    target.assert_serves()


def test_write_outside_the_working_directory(target: Target) -> None:
    name = f"escaped-{secrets.token_hex(4)}"
    places = [f"{d}/{name}" for d in ("/", "/etc", "/usr", "/opt", "/home", target.outside_dir)]
    code = f"""
outcomes = {{}}
for path in {places!r}:
    try:
        with open(path, "w") as f:
            f.write("x")
        outcomes[path] = "written"
    except OSError as exc:
        outcomes[path] = type(exc).__name__
outcomes
"""
    observation: Any = target.run(code)
    outcomes = eval(observation.result)
    assert "written" not in outcomes.values(), outcomes
    assert not any(target.exists(path) for path in places)  # type: ignore[operator]
    target.assert_serves()


def test_read_a_secret_file_outside(target: Target) -> None:
    code = f"""
import glob, os
found = []
try:
    found.append(open({target.secret_path!r}).read())
except OSError as exc:
    found.append(type(exc).__name__)
for depth in range(4):  # every visible folder but the system's, three levels down
    found += glob.glob("/" + "*/" * depth + "secret.txt")
found
"""
    observation: Any = target.run(code)
    assert target.secret not in observation.result + observation.stdout
    assert eval(observation.result) == ["FileNotFoundError"]
    target.assert_serves()


def test_read_the_servers_environment(target: Target) -> None:
    code = f"""
import os
seen = [repr(dict(os.environ))]
for path in ("/proc/self/environ", "/proc/1/environ", "/proc/{target.server_pid}/environ"):
    try:
        seen.append(open(path, "rb").read().decode(errors="replace"))
    except OSError as exc:
        seen.append(type(exc).__name__)
seen
"""
    observation: Any = target.run(code)
    assert target.secret not in observation.result
    assert SECRET_VARIABLE not in observation.result
    target.assert_serves()


def test_connect_to_a_tcp_server_on_loopback(target: Target) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    code = f"""
import errno, socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"escaped")
    outcome = "connected"
except OSError as exc:
    outcome = errno.errorcode.get(exc.errno, type(exc).__name__)
outcome
"""
    try:
        observation: Any = target.run(code)
    finally:
        stop.set()
        thread.join(10)
        listener.close()
    assert observation.result == "'EAFNOSUPPORT'", observation  # no TCP socket at all
    assert accepted == []
    target.assert_serves()


def test_kill_or_signal_the_parent(target: Target) -> None:
    code = f"""
import os, signal
outcomes = {{}}
for name, pid in [("parent", os.getppid()), ("server", {target.server_pid}), ("init", 1), ("everyone", -1)]:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
            outcomes[name] = "sent"
        except OSError as exc:
            outcomes[name] = type(exc).__name__
outcomes
"""
    with target.client().sync() as env:
        env.reset()
        env.step(CodeAction(code="kept = 1"))
        observation = env.step(CodeAction(code=code)).observation
        after = env.step(CodeAction(code="kept")).observation
    # Whatever the signals reached, it was inside the sandbox: the server and this session live.
    assert after.result == "1" or after.context_lost, (observation, after)
    target.assert_serves()


def test_subprocess_and_os_system_keep_the_limits(target: Target) -> None:
    code = """
import os, resource, subprocess, sys
child = subprocess.run(
    [sys.executable, "-c",
     "import resource as r; print(r.getrlimit(r.RLIMIT_AS)[1], r.getrlimit(r.RLIMIT_NPROC)[1]);"
     "bytearray(2 * 1024 ** 3)"],
    capture_output=True, text=True, timeout=60,
)
shell = os.system("ulimit -v unlimited 2>/dev/null && echo raised || echo refused")
try:
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    own = "raised"
except (ValueError, OSError) as exc:
    own = type(exc).__name__
child.stdout.split(), child.stderr.strip().splitlines()[-1], own
"""
    observation: Any = target.run(code)
    assert observation.result is not None, observation
    (memory, processes), child_error, own = eval(observation.result)
    assert int(memory) == LIMITS["memory_mb"] * 1024 * 1024
    assert int(processes) == LIMITS["max_processes"]
    assert child_error == "MemoryError" and own == "ValueError"
    assert "refused" in observation.stdout and "raised" not in observation.stdout
    target.assert_serves()


def test_ctypes(target: Target) -> None:
    code = """
import ctypes, resource
libc = ctypes.CDLL(None, use_errno=True)
class Limit(ctypes.Structure):
    _fields_ = [("soft", ctypes.c_ulong), ("hard", ctypes.c_ulong)]
unlimited = Limit(ctypes.c_ulong(-1).value, ctypes.c_ulong(-1).value)
raised = libc.setrlimit(resource.RLIMIT_AS, ctypes.byref(unlimited))
libc.malloc.restype = ctypes.c_void_p
block = libc.malloc(ctypes.c_size_t(4 * 1024 ** 3))
raised, block
"""
    with target.client().sync() as env:
        env.reset()
        observation = env.step(CodeAction(code=code)).observation
        assert observation.result == "(-1, None)", observation
        crash = env.step(CodeAction(code="import ctypes; ctypes.string_at(0)")).observation
        assert crash.context_lost and "SIGSEGV" in crash.message, crash
        assert env.step(CodeAction(code="1 + 1")).observation.result == "2"
    target.assert_serves()


def test_read_another_sessions_files(target: Target) -> None:
    token = secrets.token_hex(8)
    write = f"""
for path in ("/workspace/{token}.txt", "/tmp/{token}.txt"):
    with open(path, "w") as f:
        f.write("{token}")
"""
    look = f"""
import glob, os
found = []
for depth in range(4):
    found += glob.glob("/" + "*/" * depth + "{token}.txt")
def files(folder):  # an interpreter installed under /tmp is bound there: a folder, read-only
    return [n for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n))]
found, files("/workspace"), files("/tmp")
"""
    with target.client().sync() as owner, target.client().sync() as other:
        owner.reset()
        other.reset()
        assert owner.step(CodeAction(code=write)).observation.exit_code == 0
        observation = other.step(CodeAction(code=look)).observation
        assert eval(observation.result) == ([], [], []), observation
        mine = owner.step(CodeAction(code=look)).observation
        assert mine.result.count(token) == 4, mine  # the owner does see them
    target.assert_serves()
