"""Where the server's event loop spends a typed step: cProfile's shares by library.

    python benchmarks/profile_step.py                  # this checkout, threaded and inline
    python benchmarks/profile_step.py --before ../old  # and an older checkout, side by side

The typed server (benchmarks/servers/typed.py) is profiled with cProfile while one client makes
sequential WebSocket steps, after a warm-up; the loop thread's own time (waiting in epoll left
out) is summed by the library each function belongs to. With the default threaded execution the environment's
``step`` runs on another thread, so what is left is the server's overhead: decoding, validation,
the hop to the thread, encoding and the socket.
"""

from __future__ import annotations

import argparse
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from child_processes import die_with_parent  # noqa: E402
from serving import free_port  # noqa: E402

from openenv_hub.client.generic import GenericEnvClient  # noqa: E402

# (label, path fragments); the first that matches a function's file wins.
GROUPS = [
    ("environment (typed.py)", ("benchmarks/servers/typed.py",)),
    ("openenv_hub server", ("openenv_hub/server/",)),
    ("openenv_hub other", ("openenv_hub/",)),
    ("pydantic", ("pydantic",)),
    ("json", ("/json/", "{built-in method _json", "orjson")),
    ("websockets", ("websockets/",)),
    ("uvicorn, starlette, fastapi", ("uvicorn/", "starlette/", "fastapi/", "h11/", "httptools")),
    ("asyncio and threads", ("asyncio/", "selectors.py", "threading.py", "concurrent/", "queue")),
]
IDLE = ("method 'poll' of 'select.epoll' objects", "method 'select' of 'select.epoll' objects")


def profile(label: str, args: list[str], env: dict[str, str], steps: int) -> dict[str, float]:
    """Run the server under cProfile for ``steps`` steps; seconds of loop-thread time by group."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        stats_file = Path(tmp) / "stats.prof"
        command = [sys.executable, str(ROOT / "benchmarks" / "servers" / "typed.py")]
        server = subprocess.Popen(
            [*command, "--port", str(port), "--profile", str(stats_file), *args],
            env={**os.environ, **env},
            preexec_fn=die_with_parent,  # killed with the script, however the script ends
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{label}: the server did not start")
            time.sleep(0.02)
        with GenericEnvClient(url).sync() as env_client:
            env_client.reset()
            for _ in range(200):  # warm up: imports, caches
                env_client.step({"message": "hello"})
            server.send_signal(signal.SIGUSR1)
            time.sleep(0.2)  # the handler runs when the loop wakes
            for _ in range(steps):
                env_client.step({"message": "hello"})
            server.send_signal(signal.SIGUSR2)
            while not stats_file.exists() and server.poll() is None:
                time.sleep(0.05)
            time.sleep(0.2)  # the file is written whole
        server.terminate()
        server.wait(30)
        return by_group(pstats.Stats(str(stats_file)))


def by_group(stats: pstats.Stats) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for (filename, _line, name), row in stats.stats.items():  # type: ignore[attr-defined]
        own_time = row[2]
        where = f"{filename}:{name}"
        if any(idle in where for idle in IDLE):
            continue
        group = next((g for g, parts in GROUPS if any(p in where for p in parts)), "other")
        totals[group] += own_time
    return dict(totals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--before", type=Path, help="an older checkout of this project")
    options = parser.parse_args()
    runs = [("threaded", [], {}), ("inline", ["--inline"], {})]
    if options.before is not None:
        runs.insert(0, ("before", [], {"PYTHONPATH": str(options.before.resolve())}))
    results = {label: profile(label, args, env, options.steps) for label, args, env in runs}
    groups = [g for g, _ in GROUPS] + ["other"]
    print(f"\nloop-thread time per step, µs, and its share ({options.steps} sequential steps)\n")
    print("| | " + " | ".join(results) + " |")
    print("|---|" + "---:|" * len(results))
    for group in [*groups, "total"]:
        cells = []
        for totals in results.values():
            total = sum(totals.values())
            value = total if group == "total" else totals.get(group, 0.0)
            cells.append(f"{value / options.steps * 1e6:,.1f} ({value / total:.0%})")
        print(f"| {group} | " + " | ".join(cells) + " |")
    print("\ncProfile slows every call it sees alike; compare shares, not absolute speed.")


if __name__ == "__main__":
    main()
