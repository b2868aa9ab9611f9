"""The speed targets of `core.py` in short interleaved slices, for a machine others are using.

    python benchmarks/targets.py --before ../at-457318a --before ../at-f3cae30

`core.py` measures each server for half a minute, one after the other; on a shared machine
whose load swings from minute to minute the servers of one round then meet different loads.
Here every server is started at once and stays up; a round is a number of slices, and in each
slice every server in turn (the order reversed every other slice) gets a short sequential
WebSocket run, a short run of stateless HTTP ``/step`` calls and, for echo, a short run of 32
sessions, all with the same client as `core.py`; then the sequential and HTTP runs again with
the bare clients of `raw_clients.py` (``seq raw``, ``http raw``), whose own cost a request is
small beside the server's. A figure of a round is the median of its slices; the ratios the
targets are set in are taken within each round (paired), and their median over the rounds is
reported with the range, for both kinds of client.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import core
import raw_clients

SLICE_STEPS = 400
SLICE_HTTP_S = 0.5
SLICE_SESSIONS, SLICE_SESSION_STEPS = 32, 40


def measure_slice(server: core.Server, action: dict[str, Any], sessions: bool) -> dict[str, float]:
    out = {
        "seq": asyncio.run(core.sequential_async(server.url, action, SLICE_STEPS))["steps/s"],
        "http": core.http_steps(server.url, action, SLICE_HTTP_S),
        "seq raw": raw_clients.ws_steps(server.url, action, SLICE_STEPS),
        "http raw": raw_clients.http_steps(server.url, action, SLICE_HTTP_S),
    }
    if sessions:
        c32 = core.concurrent(server, action, SLICE_SESSIONS, SLICE_SESSION_STEPS)
        out["c32"] = asyncio.run(c32)["steps/s"]
    return out


def load_average() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--slices", type=int, default=5, help="slices a round")
    parser.add_argument("--peer-python", help="python of a venv with the openenv package")
    args = parser.parse_args()
    peer = args.peer_python or str(core.ensure_peer_python())
    left_out = ("typed: ours inline", "echo: openenv")  # no target is set in them
    plan = [p for p in core.servers(sys.executable, peer, args.before) if p[0] not in left_out]
    running = {name: (core.Server(name, cmd, env), action) for name, cmd, action, env in plan}
    print(f"load average before: {load_average()}", flush=True)
    try:
        for server, _ in running.values():
            server.start()
        rounds = [run_round(running, number, args.slices) for number in range(args.rounds)]
    finally:
        for server, _ in running.values():
            server.stop()
    print(f"load average after: {load_average()}")
    report(rounds)


def run_round(
    running: dict[str, tuple[core.Server, dict[str, Any]]], number: int, slices: int
) -> dict[str, dict[str, float]]:
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in running}
    names = list(running)
    for index in range(slices):
        for name in names if index % 2 == 0 else names[::-1]:
            server, action = running[name]
            samples[name].append(measure_slice(server, action, name.startswith("echo:")))
    result = {
        name: {key: statistics.median(s[key] for s in taken) for key in taken[0]}
        for name, taken in samples.items()
    }
    print(f"\nround {number + 1} (load average {load_average()}): medians of {slices} slices")
    for name, figures in result.items():
        shown = "  ".join(f"{key} {value:8,.0f}" for key, value in figures.items())
        print(f"  {name:22} {shown}", flush=True)
    return result


def paired(rounds: list[dict[str, dict[str, float]]]) -> dict[str, list[float]]:
    """Each target's ratio, round by round."""
    ratios: dict[str, list[float]] = {}

    def ratio(label: str, name: str, base: str, key: str) -> None:
        if name in rounds[0] and base in rounds[0]:
            ratios[label] = [r[name][key] / r[base][key] for r in rounds]

    ratio("typed sequential / floor", "typed: ours", "floor", "seq")
    ratio("typed HTTP / openenv typed HTTP", "typed: ours", "typed: openenv", "http")
    ratio("echo sequential / floor", "echo: ours", "floor", "seq")
    ratio("raw clients: typed sequential / floor", "typed: ours", "floor", "seq raw")
    ratio(
        "raw clients: typed HTTP / openenv typed HTTP", "typed: ours", "typed: openenv", "http raw"
    )
    ratio("raw clients: floor HTTP / openenv typed HTTP", "floor", "typed: openenv", "http raw")
    ratio("floor HTTP / openenv typed HTTP", "floor", "typed: openenv", "http")
    for name in [n for n in rounds[0] if n.startswith("typed: before")]:
        old = name.split("before ", 1)[1]
        ratio(f"typed sequential / {old}", "typed: ours", name, "seq")
        ratio(f"typed HTTP / {old}", "typed: ours", name, "http")
        ratio(f"raw clients: typed sequential / {old}", "typed: ours", name, "seq raw")
        ratio(f"raw clients: typed HTTP / {old}", "typed: ours", name, "http raw")
        for key, label in [("seq", "sequential"), ("c32", "32 sessions"), ("http", "HTTP")]:
            ratio(f"echo {label} / {old}", "echo: ours", f"echo: before {old}", key)
    return ratios


def report(rounds: list[dict[str, dict[str, float]]]) -> None:
    print("\n| ratio | each round | median | range |\n|---|---|---:|---:|")
    for label, values in paired(rounds).items():
        listed = ", ".join(f"{v:.2f}" for v in values)
        spread = f"{min(values):.2f}-{max(values):.2f}"
        print(f"| {label} | {listed} | {statistics.median(values):.2f}x | {spread} |")
    print(f"\n{len(rounds)} rounds on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M')}")


if __name__ == "__main__":
    main()
