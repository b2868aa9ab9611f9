"""Runs an engine for as long as the processes that use it live.

    python engine_supervisor.py USERS_DIR LOG STATE -- COMMAND...

Starts COMMAND (its output to LOG) in a process group of its own, then checks every half
second: once no pid named by a file in USERS_DIR is alive (after the first one appeared), or
the engine exits, or on SIGTERM, it kills the engine's whole group, removes STATE (the file
that tells users where the engine is) and exits. So an engine shared by several test processes
ends with the last of them, however they end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

MAX_LIFETIME_S = 6 * 3600  # a bound, should every check fail


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def users_alive(users: Path) -> bool:
    pids = [int(p.name) for p in users.iterdir() if p.name.isdigit()]
    return any(alive(pid) for pid in pids)


def main() -> None:
    users, log, state = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    command = sys.argv[sys.argv.index("--") + 1 :]
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    with open(log, "wb") as output:
        engine = subprocess.Popen(
            command, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        started = time.monotonic()
        try:
            while not stopping and engine.poll() is None:
                if not users_alive(users) or time.monotonic() - started > MAX_LIFETIME_S:
                    break
                time.sleep(0.5)
        finally:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(engine.pid, signal.SIGKILL)
            engine.wait(timeout=30)
            state.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
