"""Many concurrent sessions on one server process: steps/s, latency, memory, threads, files.

python benchmarks/sessions.py [--sizes 128,1024,4096,10000] [--steps 20] [--clients 2]
                              [--modes threaded,inline,openenv] [--before DIR] [--pin 0:1]
                              [--client lean|websockets] [--total-steps N]

Each mode is one server process of the typed environment (``servers/typed.py``; the ``openenv``
package's twin for ``openenv``, in its own virtual environment), started once and given every
size in turn. For each size, ``--clients`` client processes open their share of the sessions
(one WebSocket each, reset), then all step at once, each session ``--steps`` steps one after
the other (``session_clients.py``: by default on ``ws_load.py``'s lean protocol, so that the
clients take as little as they can of the cores they share with the server). The server's RSS,
threads and open files are sampled every 0.2 s (the tables give the peak), and the CPU time of
the server and of the clients while stepping says which side limited. The server's CPU time
per step depends less on what else the machine runs than steps/s; the event loop thread's
share of it is given too ("loop us/step"). A mode whose sessions fail at one size is not given
the larger ones. ``--pin 0:1`` runs the server on CPU 0 and the clients on CPU 1, so that
neither takes the other's core or caches.

Modes: ``threaded`` (the default settings: a bounded set of threads, each session pinned to
one), ``inline`` (``run_on_event_loop=True``), ``openenv`` (the ``openenv`` package's server),
and with ``--before DIR`` (a checkout of openenv-hub to compare with) ``before`` and
``before-inline``, the first two on that checkout.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from peer_venv import PEER_DIR, ensure_peer_python  # noqa: E402
from serving import free_port  # noqa: E402
from session_clients import client_process  # noqa: E402  (benchmarks/, the script's folder)

TICKS = os.sysconf("SC_CLK_TCK")


def raise_file_limit() -> tuple[int, int]:
    """Raise this process's open-file limit (inherited by servers and clients) to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


@dataclass
class Server:
    name: str
    command: list[str]
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    cpus: set[int] | None = None  # the CPUs it may run on (--pin); None: any
    process: subprocess.Popen[bytes] | None = None
    log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, max_sessions: int) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "MAX_CONCURRENT_ENVS": str(max_sessions), **self.extra_env}
        cpus = self.cpus
        self.process = subprocess.Popen(
            [*self.command, "--port", str(self.port)],
            stdout=self.log,
            stderr=self.log,
            env=env,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
            if self.process.poll() is not None:
                break
        raise RuntimeError(f"{self.name} did not start: {self.output()[-2000:]}")

    def sample(self) -> dict[str, float]:
        """RSS (MiB), threads, open files and CPU seconds of the server process now."""
        assert self.process is not None
        pid = self.process.pid
        status = {
            line.split(":")[0]: line.split()[1]
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith(("VmRSS:", "Threads:"))
        }
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        loop = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return {
            "rss": int(status["VmRSS"]) / 1024,
            "threads": int(status["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "cpu": (int(stat[11]) + int(stat[12])) / TICKS,
            "loop cpu": (int(loop[11]) + int(loop[12])) / TICKS,  # the main thread's
        }

    def output(self) -> str:
        self.log.seek(0)
        return str(self.log.read().decode(errors="replace"))

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.log is not None:
            self.log.close()


class Peaks:
    """Samples the server every 0.2 s in a thread and keeps the largest figures."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.peak: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.take()

    def take(self) -> dict[str, float]:
        now = self.server.sample()
        for key in ("rss", "threads", "fds"):
            self.peak[key] = max(self.peak.get(key, 0.0), now[key])
        return now

    def __enter__(self) -> Peaks:
        self.take()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.take()


# -- one measurement --------------------------------------------------------------------------


def measure(
    server: Server,
    sessions: int,
    steps: int,
    clients: int,
    client_cpus: set[int] | None = None,
    client: str = "lean",
) -> dict[str, Any]:
    """Open ``sessions`` sessions over ``clients`` processes, step them, and gather figures."""
    context = multiprocessing.get_context("spawn")
    shares = [sessions // clients + (1 if i < sessions % clients else 0) for i in range(clients)]
    pipes, processes = [], []
    for share in shares:
        ours, theirs = context.Pipe()
        process = context.Process(
            target=client_process, args=(server.url, share, steps, theirs, client_cpus, client)
        )
        process.start()
        pipes.append(ours)
        processes.append(process)
    try:
        with Peaks(server) as peaks:
            ready = [_expect(pipe, "ready", 900) for pipe in pipes]
            opened = sum(r[1] for r in ready)
            open_errors = sum(r[3] for r in ready)
            held = peaks.take()
            before = server.sample()
            started = time.perf_counter()
            for pipe in pipes:
                pipe.send("go")
            done = [_expect(pipe, "done", 1800) for pipe in pipes]
            elapsed = time.perf_counter() - started
            after = server.sample()
            for pipe in pipes:
                _expect(pipe, "closed", 300)
    finally:
        for process in processes:
            process.join(30)
            if process.is_alive():
                process.kill()
    latencies = sorted(x for d in done for x in d[1])
    client_cpu = [d[4] for d in done]
    server_cores = (after["cpu"] - before["cpu"]) / elapsed
    return {
        "sessions": sessions,
        "errors": max(open_errors, sessions - opened) + sum(d[2] for d in done),
        "error_sample": [e for r in ready for e in r[2]] + [e for d in done for e in d[3]],
        "steps/s": len(latencies) / elapsed,
        "p50 ms": _percentile(latencies, 0.5) * 1e3,
        "p99 ms": _percentile(latencies, 0.99) * 1e3,
        "rss open MiB": held["rss"],
        "rss MiB": peaks.peak["rss"],
        "threads": int(peaks.peak["threads"]),
        "fds": int(peaks.peak["fds"]),
        "server cores": server_cores,
        "server us/step": (after["cpu"] - before["cpu"]) / max(len(latencies), 1) * 1e6,
        "loop us/step": (after["loop cpu"] - before["loop cpu"]) / max(len(latencies), 1) * 1e6,
        "client cores": sum(client_cpu) / elapsed,
        "limited by": _limited_by(server_cores, [c / elapsed for c in client_cpu]),
    }


def _expect(pipe: Connection, kind: str, timeout_s: float) -> tuple[Any, ...]:
    if not pipe.poll(timeout_s):
        raise TimeoutError(f"a client process sent no {kind!r} within {timeout_s:g} s")
    message: tuple[Any, ...] = pipe.recv()
    if message[0] != kind:
        raise RuntimeError(f"expected {kind!r} from a client process, got {message[0]!r}")
    return message


def _percentile(values: list[float], q: float) -> float:
    return values[min(int(q * len(values)), len(values) - 1)] if values else float("nan")


def _limited_by(server_cores: float, client_cores: list[float]) -> str:
    """The side that used a whole core (a Python process's event loop uses one at most)."""
    if server_cores >= 0.85:
        return "server"
    if max(client_cores, default=0.0) >= 0.85:
        return "client"
    return "neither (shared cores)"


# -- the run ----------------------------------------------------------------------------------


def servers(modes: list[str], before: Path | None) -> list[Server]:
    typed = [sys.executable, str(ROOT / "benchmarks" / "servers" / "typed.py")]
    made = {
        "threaded": lambda: Server("threaded", typed),
        "inline": lambda: Server("inline", [*typed, "--inline"]),
        "openenv": lambda: Server(
            "openenv", [str(ensure_peer_python()), str(PEER_DIR / "typed_server.py")]
        ),
        "before": lambda: Server("before", typed, {"PYTHONPATH": str(before)}),
        "before-inline": lambda: Server(
            "before-inline", [*typed, "--inline"], {"PYTHONPATH": str(before)}
        ),
    }
    if any(mode.startswith("before") for mode in modes) and before is None:
        raise SystemExit("--modes before(-inline) needs --before DIR (a checkout of openenv-hub)")
    return [made[mode]() for mode in modes]


def run_mode(
    server: Server,
    sizes: list[int],
    steps: int,
    clients: int,
    client_cpus: set[int] | None = None,
    client: str = "lean",
    total_steps: int | None = None,
) -> list[dict[str, Any]]:
    """Each size in turn; ``total_steps``: that many steps at every size, spread over its
    sessions (instead of ``steps`` a session)."""
    results = []
    server.start(max_sessions=max(sizes) + 64)
    try:
        for sessions in sizes:
            each = max(1, total_steps // sessions) if total_steps else steps
            try:
                result = measure(server, sessions, each, clients, client_cpus, client)
            except (TimeoutError, RuntimeError, EOFError, OSError) as exc:
                result = {"sessions": sessions, "failed": f"{type(exc).__name__}: {exc}"}
            results.append(result)
            print(f"  {server.name:9} {_line(result)}", flush=True)
            if "failed" in result or result["errors"]:
                print(f"  {server.name}: not given more sessions", flush=True)
                break
            time.sleep(2)  # let the server close the sessions
    finally:
        server.stop()
    return results


def _line(r: dict[str, Any]) -> str:
    if "failed" in r:
        return f"{r['sessions']:>6,} sessions: FAILED {r['failed']}"
    return (
        f"{r['sessions']:>6,} sessions: {r['steps/s']:>7,.0f} steps/s, p50 {r['p50 ms']:.1f} ms, "
        f"p99 {r['p99 ms']:.1f} ms, RSS {r['rss MiB']:.0f} MiB, threads {r['threads']}, "
        f"files {r['fds']}, errors {r['errors']}, server {r['server cores']:.2f} cores "
        f"({r['server us/step']:.0f} us CPU a step), "
        f"clients {r['client cores']:.2f} cores ({r['limited by']})"
        + (f"\n            e.g. {r['error_sample'][:2]}" if r["errors"] else "")
    )


def report(results: dict[str, list[dict[str, Any]]], sizes: list[int]) -> None:
    modes = list(results)
    by_size = {m: {r["sessions"]: r for r in rs} for m, rs in results.items()}
    print("\n| sessions | " + " | ".join(f"{m} steps/s (x of {sizes[0]})" for m in modes) + " |")
    print("|---:|" + "---:|" * len(modes))
    for size in sizes:
        cells = []
        for mode in modes:
            r, first = by_size[mode].get(size), by_size[mode].get(sizes[0])
            if r is None or "failed" in r:
                cells.append("failed" if r else "-")
            else:
                ratio = r["steps/s"] / first["steps/s"] if first and "steps/s" in first else 0
                cells.append(f"{r['steps/s']:,.0f} ({ratio:.2f}x)")
        print(f"| {size:,} | " + " | ".join(cells) + " |")
    figures = ["p50 ms", "p99 ms", "server us/step", "loop us/step", "rss MiB", "threads", "fds"]
    figures.append("errors")
    figures.append("limited by")
    print("\n| sessions | mode | " + " | ".join(figures) + " |")
    print("|---:|---|" + "---:|" * len(figures))
    for size in sizes:
        for mode in modes:
            r = by_size[mode].get(size)
            if r is None or "failed" in r:
                continue
            cells = [
                f"{r[f]:,.1f}"
                if isinstance(r[f], float)
                else f"{r[f]:,}"
                if isinstance(r[f], int)
                else str(r[f])
                for f in figures
            ]
            print(f"| {size:,} | {mode} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="128,1024,4096,10000")
    parser.add_argument("--steps", type=int, default=20, help="steps per session")
    parser.add_argument(
        "--total-steps",
        type=int,
        metavar="N",
        help="N steps at every size, spread over its sessions (instead of --steps): a round of "
        "a few sessions then lasts as long as one of thousands",
    )
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--modes", default="threaded,inline,openenv")
    parser.add_argument(
        "--client",
        choices=("lean", "websockets"),
        default="lean",
        help="the clients' WebSocket code: ws_load.py's protocol (default) or the websockets "
        "library's client (runs 1 to 8)",
    )
    parser.add_argument("--before", type=Path, help="an openenv-hub checkout for --modes before")
    parser.add_argument(
        "--pin",
        metavar="SERVER:CLIENTS",
        help="CPUs for the server and for the clients, e.g. 0:1 (default: both share every CPU)",
    )
    args = parser.parse_args()
    server_cpus, client_cpus = _pinning(args.pin)
    sizes = [int(s) for s in args.sizes.split(",")]
    soft, hard = raise_file_limit()
    load = os.getloadavg()
    print(
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"open-file limit raised from {soft} to the hard limit {hard}; "
        + (
            f"{args.total_steps} steps a size"
            if args.total_steps
            else f"{args.steps} steps per session"
        )
        + f", {args.clients} client processes"
        + (
            f"; server on CPUs {sorted(server_cpus)}, clients on {sorted(client_cpus or ())}"
            if server_cpus
            else ""
        ),
        flush=True,
    )
    results = {}
    for server in servers(args.modes.split(","), args.before):
        server.cpus = server_cpus
        results[server.name] = run_mode(
            server, sizes, args.steps, args.clients, client_cpus, args.client, args.total_steps
        )
    report(results, sizes)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


def _pinning(pin: str | None) -> tuple[set[int] | None, set[int] | None]:
    """``"0:1,2"`` as the server's CPUs and the clients' (``None``: not pinned)."""
    if not pin:
        return None, None
    try:
        server, clients = ({int(c) for c in side.split(",")} for side in pin.split(":"))
    except ValueError:
        raise SystemExit(
            f"--pin {pin!r}: give the server's CPUs and the clients', e.g. 0:1"
        ) from None
    return server, clients


if __name__ == "__main__":
    main()
