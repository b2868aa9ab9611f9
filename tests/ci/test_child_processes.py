"""A child a test starts is gone when the test process ends, even with no teardown run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# Stands in for a pytest that dies before its teardowns: it starts a long-lived child the way
# the suite does, says the child's pid, and waits to be killed.
PARENT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from child_processes import start_child
child = start_child([sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_child_is_killed_when_the_test_process_is() -> None:
    child = 0
    with subprocess.Popen(
        [sys.executable, "-c", PARENT, str(TESTS)], stdout=subprocess.PIPE, text=True
    ) as parent:
        try:
            assert parent.stdout is not None
            child = int(parent.stdout.readline())
            assert _alive(child)
            parent.kill()
            parent.wait(timeout=10)
            deadline = time.monotonic() + 10
            while _alive(child) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _alive(child)
        finally:
            parent.kill()
            if child and _alive(child):
                os.kill(child, signal.SIGKILL)
