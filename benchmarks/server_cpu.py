"""The server process's CPU time per stateless HTTP ``POST /step`` over 127.0.0.1, uvicorn and
the kernel's side of the socket included: the typed server here, in older checkouts and in the
`openenv` package (tests/peer, its own virtual environment).

    python benchmarks/server_cpu.py --rounds 5 --count 2000
    python benchmarks/server_cpu.py --before ../old

Each server is started in turn (in alternating order from round to round), warmed up with 200
requests, then sent ``--count`` requests one after another by one httpx client; its CPU time
(``/proc/PID/stat``, in ticks of 10 ms: send enough requests) is divided by the count. CPU time
does not count time spent waiting for a core, so the figures hold on a busy machine; where the
server is what limits the rate, requests/s go as their inverse. The client's own CPU time a
request is printed too: with one sequential client it adds to every server's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from child_processes import die_with_parent  # noqa: E402
from peer_venv import PEER_DIR, ensure_peer_python  # noqa: E402
from serving import free_port  # noqa: E402

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
BODY = {"action": {"message": "hello"}}


def process_cpu_s(pid: int) -> float:
    """User and system CPU time of process ``pid`` so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_S


def measure(command: list[str], pythonpath: str, count: int) -> tuple[float, float]:
    """Server and client CPU µs a request, for the server that ``command`` starts."""
    port = free_port()
    server = subprocess.Popen(
        [*command, "--port", str(port)],
        env={**os.environ, "PYTHONPATH": pythonpath},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=die_with_parent,  # killed with the script, however the script ends
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_healthy(server, url)
        with httpx.Client(base_url=url, timeout=30) as client:
            for _ in range(200):
                client.post("/step", json=BODY).raise_for_status()
            started, mine = process_cpu_s(server.pid), time.process_time()
            for _ in range(count):
                client.post("/step", json=BODY).raise_for_status()
            used, mine = process_cpu_s(server.pid) - started, time.process_time() - mine
        return used / count * 1e6, mine / count * 1e6
    finally:
        server.terminate()
        server.wait(10)


def _wait_healthy(server: subprocess.Popen[bytes], url: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{url}: the server did not start")
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--before", type=Path, action="append", default=[], help="an older checkout (repeatable)"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=2000, help="requests per measurement")
    args = parser.parse_args()
    typed = Path("benchmarks") / "servers" / "typed.py"
    servers = {
        "this": ([sys.executable, str(ROOT / typed)], str(ROOT)),
        **{p.name: ([sys.executable, str(p / typed)], str(p.resolve())) for p in args.before},
        "openenv": ([str(ensure_peer_python()), str(PEER_DIR / "typed_server.py")], ""),
    }
    server_us: dict[str, list[float]] = {name: [] for name in servers}
    client_us: dict[str, list[float]] = {name: [] for name in servers}
    for number in range(args.rounds):
        order = list(servers) if number % 2 == 0 else list(servers)[::-1]
        for name in order:
            used, mine = measure(*servers[name], args.count)
            server_us[name].append(used)
            client_us[name].append(mine)
            print(f"round {number + 1}: {name:12} {used:7.1f} µs server CPU", file=sys.stderr)
    print("\n| server | server CPU µs (median) | openenv / it (median, range) | client CPU µs |")
    print("|---|---:|---:|---:|")
    for name in servers:
        pairs = zip(server_us["openenv"], server_us[name], strict=True)
        ratios = [peer / it if it else float("inf") for peer, it in pairs]  # it: 0 ticks
        print(
            f"| {name} | {statistics.median(server_us[name]):.0f} | "
            f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | "
            f"{statistics.median(client_us[name]):.0f} |"
        )
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
