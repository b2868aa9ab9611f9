"""A sandbox never outlives its server: killing the server (SIGKILL, no cleanup) ends them all,
even one whose interpreter is stuck in a loop and never reads another request."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from coding_env import CodeAction, CodingEnv


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``, from /proc."""
    children: dict[int, list[int]] = {}
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            lines = status.read_text().splitlines()
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
        children.setdefault(int(fields["PPid"]), []).append(int(fields["Pid"]))
    found, pending = set(), [pid]
    while pending:
        for child in children.get(pending.pop(), []):
            found.add(child)
            pending.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def spin(url: str) -> None:
    """A step that loops for ever (until the server's wall-time limit, or the server's end)."""
    with contextlib.suppress(Exception), CodingEnv(base_url=url).sync() as env:
        env.reset()
        env.step(CodeAction(code="while True:\n    pass"))


@pytest.mark.slow
def test_killing_the_server_ends_every_sandbox() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "openenv_hub.server", "coding_env.server.app:app",
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.05)
        with CodingEnv(base_url=url).sync() as idle:
            idle.reset()
            idle.step(CodeAction(code="x = 1"))
            threading.Thread(target=spin, args=(url,), daemon=True).start()
            deadline = time.monotonic() + 30
            while len(descendants(server.pid)) < 6 and time.monotonic() < deadline:
                time.sleep(0.05)  # bwrap and the sandbox's two processes, per session
            time.sleep(0.5)  # the loop runs
            sandboxes = descendants(server.pid)
            assert len(sandboxes) >= 6, sandboxes
            server.send_signal(signal.SIGKILL)
            server.wait(10)
            deadline = time.monotonic() + 10
            while [p for p in sandboxes if alive(p)] and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [p for p in sandboxes if alive(p)] == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(10)
