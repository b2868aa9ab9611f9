"""Scaling out: a CPU-bound environment on 1 and 2 Ray replicas, and EnvPool's own overhead.

    python benchmarks/scale.py            # full run (about 3 minutes)
    python benchmarks/scale.py --quick    # fewer rounds, for a smoke test
    python benchmarks/scale.py --serve    # also through Ray Serve (needs ray[serve] installed)

Starts its own two-node Ray cluster on loopback (``ray start`` twice, one CPU each, with the
tests' ``tests/ray_support.py``, so it needs the dev extra's pytest) and stops it at the end.
Prints:

- steps/s of ``servers/cpu_bound.py`` (about 5 ms of pure-Python work per step) driven by a
  16-session EnvPool: one local server (no Ray), then RayProvider with 1 and with 2 replicas,
  alternated; target: 2 replicas >= 1.7x one. Each Ray figure four ways: the environment's
  calls on a thread per session (the default) or on the event loop (``cpu_bound:inline_app``),
  and the pool driven in rounds (``step_all``) or each slot on its own (``step(i, action)``);
- with ``--serve``: the same environment as a Ray Serve deployment of 2 replicas, its 16
  sessions through Serve's proxy (the alternative to one actor serving uvicorn per replica);
- steps/s of echo (one local server) driven by an EnvPool of 32 sessions against 32 raw
  clients stepped with ``asyncio.gather``, alternated; target: the pool within 10%.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ROOT / "benchmarks" / "servers"
sys.path[:0] = [str(ROOT / "tests"), str(SERVERS)]

from ray_support import RayCluster  # noqa: E402

from openenv_hub import EnvPool, GenericEnvClient  # noqa: E402
from openenv_hub.runtimes.local import LocalProcessProvider  # noqa: E402

WORK = {"seed": 1}
ECHO = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hello"}}


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) the processes used so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def machine_ticks() -> tuple[int, int, int]:
    """The machine's CPU time so far, in clock ticks: (busy, idle, stolen by the host)."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(
        int, Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
    )
    return user + nice + system + irq + softirq, idle + iowait, steal


def niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


async def pool_rate(
    source: Any,
    size: int,
    rounds: int,
    action: dict[str, Any],
    servers: list[int] = (),
    *,
    each: bool = False,
) -> float:
    """Steps per second of an EnvPool of ``size`` sessions over ``rounds`` step_all calls (or,
    with ``each``, ``rounds`` steps of every slot, each slot stepping as soon as its last step
    returned); prints the cores the ``servers`` processes, this one and the rest of the machine
    (Ray's daemons, the kernel, other work) used meanwhile, the cores left idle, and those the
    host of this virtual machine took for itself (steal time)."""
    async with EnvPool(source, size=size) as pool:
        await pool.reset_all()
        await pool.step_all([action] * size)  # warm up
        used, mine, machine = cpu_seconds(list(servers)), time.process_time(), machine_ticks()
        started = time.perf_counter()
        if each:
            results = await asyncio.gather(*(_steps(pool, i, rounds, action) for i in range(size)))
        else:
            for _ in range(rounds):
                results = await pool.step_all([action] * size)
        elapsed = time.perf_counter() - started
        used, mine = cpu_seconds(list(servers)) - used, time.process_time() - mine
        busy, idle, stolen = (
            (after - before) / os.sysconf("SC_CLK_TCK") / elapsed
            for before, after in zip(machine, machine_ticks(), strict=True)
        )
        assert all(not isinstance(r, Exception) for r in results), results
    if servers:
        nice = ",".join(str(niceness(pid)) for pid in servers)
        print(
            f"    {size * rounds / elapsed:7.1f} steps/s; cores used: servers {used / elapsed:.2f}"
            f" (nice {nice}), the client {mine / elapsed:.2f}, the rest of the machine"
            f" {busy - (used + mine) / elapsed:.2f}; idle {idle:.2f}, taken by the host"
            f" {stolen:.2f}"
        )
    return size * rounds / elapsed


async def _steps(pool: EnvPool[Any, Any, Any], index: int, count: int, action: Any) -> Any:
    for _ in range(count):
        result = await pool.step(index, action)
    return result


async def raw_rate(url: str, size: int, rounds: int, action: dict[str, Any]) -> float:
    """The same with ``size`` GenericEnvClients stepped with asyncio.gather."""
    clients = [GenericEnvClient(url) for _ in range(size)]
    try:
        await asyncio.gather(*(c.connect() for c in clients))
        await asyncio.gather(*(c.reset() for c in clients))
        await asyncio.gather(*(c.step(action) for c in clients))
        started = time.perf_counter()
        for _ in range(rounds):
            await asyncio.gather(*(c.step(action) for c in clients))
        elapsed = time.perf_counter() - started
    finally:
        await asyncio.gather(*(c.close() for c in clients))
    return size * rounds / elapsed


def alternate(runs: dict[str, Callable[[], Awaitable[float]]], repeats: int) -> dict[str, float]:
    """Run each measurement ``repeats`` times, alternating; the median of each."""
    seen: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            seen[name].append(asyncio.run(run()))
    return {name: statistics.median(values) for name, values in seen.items()}


def _work_for(seconds: float) -> int:
    from cpu_bound import busy

    done, deadline = 0, time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        busy(done)
        done += 1
    return done


def plain_processes(count: int, seconds: float) -> Callable[[], Awaitable[float]]:
    """The ceiling: the same work in ``count`` plain processes, no server, no network."""

    async def run() -> float:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(count) as workers:
            await asyncio.sleep(0)
            steps = workers.map(_work_for, [seconds] * count)
        return sum(steps) / seconds

    return run


#: How the Ray figures are taken: (label, app, each slot on its own).
WAYS = [
    ("threads, step_all", "cpu_bound:app", False),
    ("threads, per slot", "cpu_bound:app", True),
    ("event loop, step_all", "cpu_bound:inline_app", False),
    ("event loop, per slot", "cpu_bound:inline_app", True),
]


async def one_and_two_replicas(
    cluster: RayCluster, rounds: int, repeats: int, app: str, each: bool
) -> tuple[list[float], list[float]]:
    """Steps/s on 1 and on 2 replicas, measured in turn ``repeats`` times. Both deployments run
    side by side (half a CPU reserved per replica, so they fit), so one pair is seconds apart:
    the pace of this machine's cores drifts by a fifth over a minute."""
    from openenv_hub.runtimes.ray import RayProvider

    def start(replicas: int) -> RayProvider:
        return RayProvider.start(
            app, replicas=replicas, num_cpus=0.5, address=cluster.address, env_dir=SERVERS
        )

    one = await asyncio.to_thread(start, 1)
    try:
        two = await asyncio.to_thread(start, 2)
    except BaseException:
        one.stop()
        raise
    rates: tuple[list[float], list[float]] = ([], [])
    try:
        for _ in range(repeats):
            for provider, seen in zip((one, two), rates, strict=True):
                pids = [r.pid for r in provider.replicas() if r.pid]
                seen.append(await pool_rate(provider, 16, rounds, WORK, pids, each=each))
    finally:
        one.stop()
        two.stop()
    return rates


def cpu_bound(cluster: RayCluster, rounds: int, repeats: int, serve: bool) -> None:
    local = LocalProcessProvider.start("cpu_bound:app", env_dir=SERVERS)
    try:
        runs = {
            "1 plain process": plain_processes(1, rounds / 10),
            "2 plain processes": plain_processes(2, rounds / 10),
            "local server, no Ray": lambda: pool_rate(
                local.base_url, 16, rounds, WORK, [local.process.pid]
            ),
        }
        if serve:
            from serve_cpu_bound import serve_rate

            runs["Ray Serve, 2 replicas"] = lambda: serve_rate(cluster.address, 16, rounds)
        rates = alternate(runs, 3)
    finally:
        local.stop()
    pairs = {}
    for way, app, each in WAYS:
        print(f"  {way}: 1 replica, then 2, {repeats} times")
        pairs[way] = asyncio.run(one_and_two_replicas(cluster, rounds, repeats, app, each))
    print("\nCPU-bound environment (~5 ms of Python per step), 16 sessions, steps/s:")
    for name, rate in rates.items():
        print(f"  {name:<24} {rate:8.1f}")
    ceiling = rates["2 plain processes"] / rates["1 plain process"]
    print(f"  the machine now: 2 plain processes make {ceiling:.2f}x one")
    print(
        f"  Ray, median of {repeats} pairs   1 replica  2 replicas  2 over 1 (median of the pairs)"
    )
    for way, (one, two) in pairs.items():
        ratio = statistics.median(b / a for a, b in zip(one, two, strict=True))
        verdict = "met" if ratio >= 1.7 else "NOT met"
        print(
            f"  {way:<24} {statistics.median(one):9.1f} {statistics.median(two):11.1f}"
            f"  {ratio:5.2f}x (target 1.7x: {verdict})"
        )


def pool_overhead(rounds: int, repeats: int) -> None:
    echo = LocalProcessProvider.start("echo_env.server.app:app", env={"MAX_CONCURRENT_ENVS": "64"})
    raw: list[float] = []
    pooled: list[float] = []
    try:
        for _ in range(repeats):  # in turn, so each pair sees the machine alike
            raw.append(asyncio.run(raw_rate(echo.base_url, 32, rounds, ECHO)))
            pooled.append(asyncio.run(pool_rate(echo.base_url, 32, rounds, ECHO)))
    finally:
        echo.stop()
    print(f"\nEcho on one server, 32 sessions, steps/s (median of {repeats} pairs):")
    print(f"  32 raw clients (gather)  {statistics.median(raw):8.1f}")
    print(f"  EnvPool(size=32)         {statistics.median(pooled):8.1f}")
    overhead = 1 - statistics.median(b / a for a, b in zip(raw, pooled, strict=True))
    verdict = "met" if overhead <= 0.10 else "NOT met"
    print(f"  the pool's cost against raw clients: {overhead:+.1%} (target within 10%: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="Fewer rounds.")
    parser.add_argument("--serve", action="store_true", help="Also measure Ray Serve.")
    args = parser.parse_args()
    rounds, repeats = (15, 1) if args.quick else (40, 7)
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    cluster = RayCluster(Path(tempfile.mkdtemp(prefix="oe-ray-", dir="/tmp")))
    try:
        cluster.start()
        cpu_bound(cluster, rounds, repeats, args.serve)
    finally:
        import ray

        ray.shutdown()
        cluster.stop()
    pool_overhead(rounds * 10, repeats)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    # Ray starts workers at niceness 15: on a machine shared with other work, the replicas
    # would get the cores last, and the local server (niceness 0) would not compare fairly.
    os.environ.setdefault("RAY_worker_niceness", "0")
    main()
