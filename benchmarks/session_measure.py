"""One measurement of ``sessions.py``: a server process of the typed environment, its peaks
(RSS, threads, open files) sampled while client processes open sessions and step them, and the
figures that come out of it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import resource
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from child_processes import die_with_parent  # tests/ (sessions.py puts it on the path)
from serving import free_port
from session_clients import client_process  # benchmarks/, the script's folder

TICKS = os.sysconf("SC_CLK_TCK")


def raise_file_limit(wanted: int = 0) -> tuple[int, int]:
    """Raise this process's open-file limit (inherited by servers and clients) to the hard one,
    or to ``wanted`` where that is more and this process may raise the hard limit (root, up to
    ``/proc/sys/fs/nr_open``). Returns the soft limit before and the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and wanted > hard:
        ceiling = (
            int(Path("/proc/sys/fs/nr_open").read_text())
            if Path("/proc/sys/fs/nr_open").exists()
            else hard
        )
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, ceiling),) * 2)
            return soft, min(wanted, ceiling)
        except (ValueError, OSError):  # not root: the hard limit is as far as it goes
            pass
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return soft, hard


@dataclass
class Server:
    name: str
    command: list[str]
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    cpus: set[int] | None = None  # the CPUs it may run on (--pin); None: any
    processes: int = 1  # the processes that serve its address (--workers)
    idle_sockets: int = 0  # its sockets once started, before any session
    process: subprocess.Popen[bytes] | None = None
    log: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, max_sessions: int) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        env = {**os.environ, "MAX_CONCURRENT_ENVS": str(max_sessions), **self.extra_env}
        cpus = self.cpus

        def setup() -> None:  # in the server's process, before it runs
            die_with_parent()  # killed with the script, however the script ends
            if cpus:
                os.sched_setaffinity(0, cpus)

        self.process = subprocess.Popen(
            [*self.command, "--port", str(self.port)],
            stdout=self.log,
            stderr=self.log,
            env=env,
            preexec_fn=setup,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    self.idle_sockets = self.sockets()
                    return
            except httpx.HTTPError:
                time.sleep(0.05)
            if self.process.poll() is not None:
                break
        raise RuntimeError(f"{self.name} did not start: {self.output()[-2000:]}")

    def sample(self) -> dict[str, float]:
        """RSS (MiB), threads, open files and CPU seconds of the server now: the sum over its
        process and the processes it forked (``--workers``)."""
        assert self.process is not None
        total = {"rss": 0.0, "threads": 0.0, "fds": 0.0, "cpu": 0.0, "loop cpu": 0.0}
        tree = _process_tree(self.process.pid)
        for pid in tree:
            try:
                for key, value in _one_process(pid, shared_once=len(tree) > 1).items():
                    total[key] += value
            except (FileNotFoundError, ProcessLookupError):  # it ended while read
                continue
        return total

    def wait_idle(self, timeout_s: float = 30.0) -> int | None:
        """Wait until the server holds about as many sockets as when it started (the sessions
        of the last size closed; a few it opened since may stay), or ``timeout_s``: then
        returns the sockets still open over that. Sockets, not every open file: the session
        threads, which stay, hold descriptors of their own."""
        deadline = time.monotonic() + timeout_s
        while (left := self.sockets() - self.idle_sockets) > 8:
            if time.monotonic() > deadline:
                return left
            time.sleep(0.05)
        return None

    def sockets(self) -> int:
        """The sockets the server holds now (summed over its processes)."""
        assert self.process is not None
        count = 0
        for pid in _process_tree(self.process.pid):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except (FileNotFoundError, ProcessLookupError):  # it ended while read
                continue
            for fd in fds:
                with contextlib.suppress(OSError):  # closed while read
                    count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        return count

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


def _process_tree(pid: int) -> list[int]:
    """``pid`` and the processes it started (one level: a server's forked processes)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid, *map(int, children)]


def _one_process(pid: int, shared_once: bool = False) -> dict[str, float]:
    """A process's figures; ``shared_once``: its RSS is its proportional share (PSS) of the
    pages it shares with the others of its server (forked: the app's pages are shared), so
    that a sum over them counts each page once."""
    status = {
        line.split(":")[0]: line.split()[1]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith(("VmRSS:", "Threads:"))
    }
    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    loop = Path(f"/proc/{pid}/task/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    rss_kib = int(status["VmRSS"])
    if shared_once:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        rss_kib = next(int(line.split()[1]) for line in rollup if line.startswith("Pss:"))
    return {
        "rss": rss_kib / 1024,
        "threads": int(status["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "cpu": (int(stat[11]) + int(stat[12])) / TICKS,
        "loop cpu": (int(loop[11]) + int(loop[12])) / TICKS,  # the main thread's
    }


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
    per_address: int | None = None,
) -> dict[str, Any]:
    """Open ``sessions`` sessions over ``clients`` processes, step them, and gather figures.
    Past ``per_address`` sessions (default :data:`SESSIONS_PER_ADDRESS`), the clients connect
    from several loopback addresses (127.0.0.2, 127.0.0.3, ...), each with its own range of
    ephemeral ports."""
    context = multiprocessing.get_context("spawn")
    shares = [sessions // clients + (1 if i < sessions % clients else 0) for i in range(clients)]
    sources = source_addresses(sessions, per_address or SESSIONS_PER_ADDRESS)
    pipes, processes = [], []
    for share in shares:
        ours, theirs = context.Pipe()
        process = context.Process(
            target=client_process,
            args=(server.url, share, steps, theirs, client_cpus, client, sources),
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
        "steps": len(latencies),  # answered: sessions x steps when no session failed
        "steps/s": len(latencies) / elapsed,
        "p50 ms": _percentile(latencies, 0.5) * 1e3,
        "p99 ms": _percentile(latencies, 0.99) * 1e3,
        "rss open MiB": held["rss"],
        "rss MiB": peaks.peak["rss"],
        "KiB/session": peaks.peak["rss"] * 1024 / sessions,
        "threads": int(peaks.peak["threads"]),
        "fds": int(peaks.peak["fds"]),
        "server cores": server_cores,
        "server us/step": (after["cpu"] - before["cpu"]) / max(len(latencies), 1) * 1e6,
        "loop us/step": (after["loop cpu"] - before["loop cpu"]) / max(len(latencies), 1) * 1e6,
        "client cores": sum(client_cpu) / elapsed,
        "limited by": _limited_by(
            server_cores, [c / elapsed for c in client_cpu], server.processes
        ),
    }


#: Sessions opened from one loopback address at most. Its ephemeral ports (32768-60999 by
#: default) are 28,232, but connect() looks for a free one among half of them first, and the
#: search slows as they fill: at 14,000 connections an address, opening one more took the
#: clients' time (a few a second); at 4,096 it does not.
SESSIONS_PER_ADDRESS = 4_096


def source_addresses(sessions: int, per_address: int = SESSIONS_PER_ADDRESS) -> list[str]:
    """The loopback addresses the clients connect from: none chosen (the kernel's, 127.0.0.1)
    up to ``per_address`` sessions, else enough of 127.0.0.2, 127.0.0.3, ... (250 at most)."""
    if sessions <= per_address:
        return []
    return [f"127.0.0.{2 + i}" for i in range(min(-(-sessions // per_address), 250))]


def _expect(pipe: Connection, kind: str, timeout_s: float) -> tuple[Any, ...]:
    if not pipe.poll(timeout_s):
        raise TimeoutError(f"a client process sent no {kind!r} within {timeout_s:g} s")
    message: tuple[Any, ...] = pipe.recv()
    if message[0] != kind:
        raise RuntimeError(f"expected {kind!r} from a client process, got {message[0]!r}")
    return message


def _percentile(values: list[float], q: float) -> float:
    return values[min(int(q * len(values)), len(values) - 1)] if values else float("nan")


def _limited_by(server_cores: float, client_cores: list[float], processes: int = 1) -> str:
    """The side that used a whole core a process (a Python process's event loop uses one at
    most), or the machine's cores when the two sides together used them all."""
    if server_cores >= 0.85 * min(processes, os.cpu_count() or 1):
        return "server"
    if max(client_cores, default=0.0) >= 0.85:
        return "client"
    if server_cores + sum(client_cores) >= 0.85 * (os.cpu_count() or 1):
        return "the machine's cores"
    return "neither (shared cores)"
