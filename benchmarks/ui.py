"""Server start time and memory with and without the web UI, for openenv-hub and `openenv`.

    python benchmarks/ui.py

Each server is started three times; the table shows the best start-to-healthy time and the RSS
after start. The `openenv` echo server runs in the peer virtual environment, started with
``python -m uvicorn`` (its web UI cannot start from ``python file.py``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from core import Server  # noqa: E402
from peer_venv import PEER_DIR, ensure_peer_python  # noqa: E402


def measure(name: str, command: list[str], web: bool, runs: int = 3) -> tuple[float, float]:
    best_start, rss = float("inf"), 0.0
    for _ in range(runs):
        os.environ["ENABLE_WEB_INTERFACE"] = "true" if web else "false"
        server = Server(name, command)
        try:
            best_start = min(best_start, server.start())
            time.sleep(0.5)
            rss = server.rss_mib()
        finally:
            server.stop()
    return best_start, rss


def main() -> None:
    peer = str(ensure_peer_python())
    ours = [sys.executable, "-m", "uvicorn", "echo_env.server.app:app", "--log-level", "warning"]
    theirs = [
        peer,
        "-m",
        "uvicorn",
        "--app-dir",
        str(PEER_DIR),
        "echo_server:app",
        "--log-level",
        "warning",
    ]
    rows = []
    for label, command in (("openenv-hub", ours), ("openenv", theirs)):
        for web in (False, True):
            start, rss = measure(label, command, web)
            rows.append((label, web, start, rss))
    print("| server | web UI | start to healthy, s | RSS, MiB |")
    print("|---|---|---:|---:|")
    for label, web, start, rss in rows:
        print(f"| {label} echo | {'on' if web else 'off'} | {start:.2f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
