"""Side by side: openenv-hub, the `openenv` package, and a bare FastAPI WebSocket floor.

    python benchmarks/core.py                    # three paired rounds (about ten minutes)
    python benchmarks/core.py --quick            # fewer steps, one round, for a smoke test
    python benchmarks/core.py --before ../old    # also an older checkout (repeatable)

Every server runs in its own process on 127.0.0.1; the `openenv` servers run in the peer
virtual environment (tests/peer_venv.py creates it once). All servers are driven by the same
client (openenv-hub's GenericEnvClient), so differences come from the servers. A round measures
every server once, one after the other (every other round in the reverse order), so that a change
of load on the machine touches all of them alike; each round's headline figures are printed as it
ends, with the ratios the targets are set in, and the tables hold the median of the rounds, with
each figure's ratio to the peer and to the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from child_processes import die_with_parent  # noqa: E402
from handoff import hop_us  # noqa: E402
from peer_venv import PEER_DIR, ensure_peer_python  # noqa: E402
from serving import free_port  # noqa: E402

from openenv_hub import GenericEnvClient  # noqa: E402

ECHO_ACTION = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "hello"}}
TYPED_ACTION = {"message": "hello"}


@dataclass
class Server:
    name: str
    command: list[str]
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    port: int = field(default_factory=free_port)
    log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start the server; returns seconds from spawn to the first healthy /health."""
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "MAX_CONCURRENT_ENVS": "64", **self.extra_env}
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [*self.command, "--port", str(self.port)],
            stdout=self.log,
            stderr=self.log,
            env=env,
            preexec_fn=die_with_parent,  # killed with the script, however the script ends
        )
        while True:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                time.sleep(0.005)
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.output()}")

    def proc_status(self, key: str) -> float:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1])
        raise KeyError(key)

    def rss_mib(self) -> float:
        return self.proc_status("VmRSS") / 1024

    def threads(self) -> int:
        return int(self.proc_status("Threads"))

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
        if self.log is not None:
            self.log.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def sequential_async(url: str, action: dict[str, Any], steps: int) -> dict[str, float]:
    latencies = []
    async with GenericEnvClient(url) as env:
        await env.reset()
        for _ in range(50):
            await env.step(action)
        started = time.perf_counter()
        for _ in range(steps):
            t = time.perf_counter()
            await env.step(action)
            latencies.append(time.perf_counter() - t)
        elapsed = time.perf_counter() - started
    return {
        "steps/s": steps / elapsed,
        "p50 ms": percentile(latencies, 0.5) * 1e3,
        "p99 ms": percentile(latencies, 0.99) * 1e3,
    }


def sequential_sync(url: str, action: dict[str, Any], steps: int) -> dict[str, float]:
    latencies = []
    with GenericEnvClient(url).sync() as env:
        env.reset()
        for _ in range(50):
            env.step(action)
        started = time.perf_counter()
        for _ in range(steps):
            t = time.perf_counter()
            env.step(action)
            latencies.append(time.perf_counter() - t)
        elapsed = time.perf_counter() - started
    return {
        "steps/s": steps / elapsed,
        "p50 ms": percentile(latencies, 0.5) * 1e3,
        "p99 ms": percentile(latencies, 0.99) * 1e3,
    }


async def concurrent(
    server: Server, action: dict[str, Any], sessions: int, steps: int
) -> dict[str, float]:
    clients = [GenericEnvClient(server.url, message_timeout_s=120) for _ in range(sessions)]
    await asyncio.gather(*(c.reset() for c in clients))
    rss = server.rss_mib()
    latencies: list[float] = []

    async def run(env: GenericEnvClient) -> None:
        for _ in range(steps):
            t = time.perf_counter()
            await env.step(action)
            latencies.append(time.perf_counter() - t)

    started = time.perf_counter()
    await asyncio.gather(*(run(c) for c in clients))
    elapsed = time.perf_counter() - started
    await asyncio.gather(*(c.close() for c in clients))
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    return {
        "steps/s": sessions * steps / elapsed,
        "p50 ms": p50 * 1e3,
        "p99 ms": p99 * 1e3,
        "p99/p50": p99 / p50,
        "rss MiB": rss,
    }


def http_steps(url: str, action: dict[str, Any], seconds: float) -> float:
    with httpx.Client(base_url=url, timeout=30) as client:
        client.post("/step", json={"action": action}).raise_for_status()
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            client.post("/step", json={"action": action}).raise_for_status()
            count += 1
    return count / (time.perf_counter() - started)


def import_seconds(python: str, code: str, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([python, "-c", code], check=True)
        best = min(best, time.perf_counter() - started)
    return best


def measure(
    server: Server, action: dict[str, Any], args: argparse.Namespace, *, floor: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {"start s": server.start()}
    time.sleep(0.5)
    out["idle rss MiB"], out["idle threads"] = server.rss_mib(), server.threads()
    out["seq async"] = asyncio.run(sequential_async(server.url, action, args.steps))
    out["seq sync"] = sequential_sync(server.url, action, args.steps)
    for sessions in (1, 8, 32, 64):
        out[f"c{sessions}"] = asyncio.run(
            concurrent(server, action, sessions, args.concurrent_steps)
        )
    time.sleep(1.0)
    out["threads after close"] = server.threads()
    out["http /step/s"] = http_steps(server.url, action, args.http_seconds)
    text = server.output()
    out["errors logged"] = text.count("Traceback") + sum(
        1 for line in text.splitlines() if " ERROR" in line or line.startswith("ERROR")
    )
    server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, help="paired rounds (default 3; 1 with --quick)")
    parser.add_argument("--peer-python", help="python of a venv with the openenv package")
    parser.add_argument(
        "--before",
        type=Path,
        action="append",
        default=[],
        help="an older checkout of this project to compare (repeatable)",
    )
    args = parser.parse_args()
    args.steps, args.concurrent_steps, args.http_seconds = (
        (500, 50, 2.0) if args.quick else (3000, 200, 5.0)
    )
    rounds = args.rounds or (1 if args.quick else 3)
    plan = servers(sys.executable, args.peer_python or str(ensure_peer_python()), args.before)
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, *_ in plan}
    for number in range(1, rounds + 1):
        for name, command, action, extra_env in plan if number % 2 else plan[::-1]:
            print(f"round {number}: measuring {name} ...", file=sys.stderr, flush=True)
            runs[name].append(measure(Server(name, command, extra_env), action, args))
        print_round(number, {name: results[-1] for name, results in runs.items()})
    print_targets(runs)
    imports = {
        "ours": import_seconds(
            sys.executable,
            "import openenv_hub; from openenv_hub import EnvClient, GenericEnvClient, MCPToolClient",
        ),
        "openenv": import_seconds(
            args.peer_python or str(ensure_peer_python()),
            "from openenv.core import EnvClient, GenericEnvClient, MCPToolClient",
        ),
    }
    report({name: median(results) for name, results in runs.items()}, imports, rounds)


Plan = list[tuple[str, list[str], dict[str, Any], dict[str, str]]]


def servers(ours: str, peer: str, befores: list[Path]) -> Plan:
    """Every server of a round: (name, command, action, extra environment)."""
    bench = ROOT / "benchmarks" / "servers"
    typed = [ours, str(bench / "typed.py")]
    plan: Plan = [
        ("floor", [ours, str(bench / "floor.py")], TYPED_ACTION, {}),
        ("typed: ours", typed, TYPED_ACTION, {}),
        ("typed: ours inline", [*typed, "--inline"], TYPED_ACTION, {}),
        ("typed: openenv", [peer, str(PEER_DIR / "typed_server.py")], TYPED_ACTION, {}),
        ("echo: ours", [ours, "-m", "echo_env.server.app"], ECHO_ACTION, {}),
        ("echo: openenv", [peer, str(PEER_DIR / "echo_server.py")], ECHO_ACTION, {}),
    ]
    for number, before in enumerate(befores):
        old = before.resolve()
        path = {"PYTHONPATH": os.pathsep.join([str(old), str(old / "envs" / "echo_env")])}
        plan.insert(2 + number, (f"typed: before {old.name}", typed, TYPED_ACTION, path))
        plan.append(
            (f"echo: before {old.name}", [ours, "-m", "echo_env.server.app"], ECHO_ACTION, path)
        )
    return plan


def median(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the rounds (nested dicts figure by figure)."""
    first = results[0]
    if isinstance(first, dict):
        return {key: median([r[key] for r in results]) for key in first}
    return statistics.median(results)


def print_round(number: int, results: dict[str, dict[str, Any]]) -> None:
    floor = results["floor"]
    print(f"\nround {number}: sequential async WS steps/s, 32 sessions steps/s (ratio to floor)")
    for name, result in results.items():
        seq, c32 = _get(result, "seq async.steps/s"), _get(result, "c32.steps/s")
        seq_ratio = seq / _get(floor, "seq async.steps/s")
        c32_ratio = c32 / _get(floor, "c32.steps/s")
        print(f"  {name:20} {seq:9,.0f} ({seq_ratio:.2f}x)  {c32:9,.0f} ({c32_ratio:.2f}x)")
    print_hop_budget(results)
    sys.stdout.flush()


def print_targets(runs: dict[str, list[dict[str, Any]]]) -> None:
    """The ratios the targets are set in, round by round (paired: the same round's servers),
    with their median: typed sequential over the floor, typed HTTP over the `openenv` package's
    typed HTTP, and echo's sequential, 32-session and HTTP figures over each older checkout's."""
    ratios: dict[str, list[float]] = {}

    def ratio(label: str, name: str, base: str, key: str) -> None:
        if name in runs and base in runs:
            pairs = zip(runs[name], runs[base], strict=True)
            ratios[label] = [_get(mine, key) / _get(other, key) for mine, other in pairs]

    ratio("typed sequential / floor", "typed: ours", "floor", "seq async.steps/s")
    ratio("typed HTTP / openenv typed HTTP", "typed: ours", "typed: openenv", "http /step/s")
    for name in [n for n in runs if n.startswith("echo: before")]:
        old = name.split("before ", 1)[1]
        ratio(f"echo sequential / {old}", "echo: ours", name, "seq async.steps/s")
        ratio(f"echo 32 sessions / {old}", "echo: ours", name, "c32.steps/s")
        ratio(f"echo HTTP / {old}", "echo: ours", name, "http /step/s")
        ratio(
            f"typed sequential / {old}", "typed: ours", f"typed: before {old}", "seq async.steps/s"
        )
        ratio(f"typed HTTP / {old}", "typed: ours", f"typed: before {old}", "http /step/s")
    print("\n## paired ratios (each round; median, range)\n")
    print("| ratio | rounds | median | range |\n|---|---|---:|---:|")
    for label, values in ratios.items():
        listed = ", ".join(f"{v:.2f}" for v in values)
        spread = f"{min(values):.2f}-{max(values):.2f}"
        print(f"| {label} | {listed} | {statistics.median(values):.2f}x | {spread} |")


def print_hop_budget(results: dict[str, dict[str, Any]]) -> None:
    """What the threaded path's 0.7x target leaves for the hop to the session's thread (a
    sequential step's time at 0.7x the floor, less the inline step's), beside a bare hop."""
    floor, inline, threads = (
        1e6 / _get(results[name], "seq async.steps/s")
        for name in ("floor", "typed: ours inline", "typed: ours")
    )
    print(
        f"  sequential, µs a step: floor {floor:.0f}, inline {inline:.0f}, threads {threads:.0f};"
        f" 0.7x is {floor / 0.7:.0f}, which leaves {floor / 0.7 - inline:.0f} for the hop;"
        f" a bare hop (benchmarks/handoff.py) costs {hop_us():.0f} here"
    )


def _get(result: dict[str, Any], key: str) -> float:
    value: Any = result
    for part in key.split("."):
        value = value[part]
    return float(value)


ROWS = [
    ("seq async.steps/s", "sequential WS steps/s (async client)"),
    ("seq async.p50 ms", "  p50 latency, ms"),
    ("seq async.p99 ms", "  p99 latency, ms"),
    ("seq sync.steps/s", "sequential WS steps/s (sync client)"),
    *[(f"c{n}.steps/s", f"{n} sessions: aggregate steps/s") for n in (1, 8, 32, 64)],
    *[(f"c{n}.p99/p50", f"{n} sessions: p99/p50") for n in (32, 64)],
    ("http /step/s", "HTTP /step requests/s"),
    ("start s", "start to healthy, s"),
    ("idle rss MiB", "idle RSS, MiB"),
    ("c64.rss MiB", "RSS with 64 sessions, MiB"),
    ("idle threads", "threads, idle"),
    ("threads after close", "threads after all sessions closed"),
    ("errors logged", "errors logged (normal closes)"),
]


def report(results: dict[str, dict[str, Any]], imports: dict[str, float], rounds: int) -> None:
    floor = results["floor"]
    befores = [name.split(": ", 1)[1] for name in results if name.startswith("typed: before")]
    columns = [
        ("typed", "typed: ours"),
        ("typed, inline", "typed: ours inline"),
        *[(f"typed, {name}", f"typed: {name}") for name in befores],
        ("echo", "echo: ours"),
        *[(f"echo, {name}", f"echo: {name}") for name in befores],
    ]
    for title, name in columns:
        if name not in results:
            continue
        ours, peer = results[name], results[f"{name.split(':')[0]}: openenv"]
        print(f"\n## {title} environment (median of {rounds} rounds)\n")
        print("| figure | openenv-hub | openenv | floor | ours/openenv | ours/floor |")
        print("|---|---:|---:|---:|---:|---:|")
        for key, label in ROWS:
            mine, theirs = _get(ours, key), _get(peer, key)
            try:
                base: float | None = _get(floor, key)
            except (KeyError, TypeError):
                base = None
            vs_peer = f"{mine / theirs:.2f}x" if theirs else "-"
            vs_floor = f"{mine / base:.2f}x" if base else "-"
            floor_text = f"{base:,.1f}" if base is not None else "-"
            print(
                f"| {label} | {mine:,.1f} | {theirs:,.1f} | {floor_text} | {vs_peer} | {vs_floor} |"
            )
    print("\n## client import\n")
    print("| | openenv-hub | openenv | ours/openenv |\n|---|---:|---:|---:|")
    print(
        f"| import the client, s | {imports['ours']:.3f} | {imports['openenv']:.3f} | {imports['ours'] / imports['openenv']:.2f}x |"
    )
    print(
        f"\n{rounds} rounds on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; client and servers share the machine."
    )


if __name__ == "__main__":
    main()
