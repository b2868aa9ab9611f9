"""Many concurrent sessions on one server process: steps/s, latency, memory, threads, files.

python benchmarks/sessions.py [--sizes 128,1024,4096,10000] [--steps 20] [--clients 2]
                              [--modes threaded,inline,openenv] [--before DIR] [--pin 0:1]
                              [--client lean|websockets] [--total-steps N] [--rounds N]
                              [--interleave] [--workers N]

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

``--interleave`` starts every mode's server first and gives each round to every mode in turn,
so that a drift of the machine's pace weighs on all modes alike (without it, one mode runs all
its rounds before the next starts).

``--workers N`` serves the typed environment from N processes behind one address
(``serve_app(app, workers=N)``); the server's figures are then the sums over its processes, its
RSS their proportional set sizes (pages the forked processes share counted once). Past 4,096
sessions the clients connect from several loopback addresses (127.0.0.2, 127.0.0.3, ...: each
has its own ephemeral ports, and the kernel finds a free one fast while few are taken). The
open-file limit is raised to what the largest size needs where this process may (as root with
CAP_SYS_RESOURCE, up to ``/proc/sys/fs/nr_open``); where it may not, a run whose processes
would each need more files than the limit is refused, naming the ``--workers`` or
``--clients`` it needs. ``--idle-timeout`` and ``--ping-timeout`` set the typed server's (a
session opened first waits, idle, while tens of thousands more open)::

    python benchmarks/sessions.py --sizes 65536 --steps 10 --modes threaded --workers 4 \
        --clients 4 --idle-timeout 3600 --ping-timeout 120

``--rounds N`` gives every size N times, the sizes in turn (128, 4,096, 128, 4,096, ...), to the
same server: the tables then give each figure's median over the rounds, and the ratio to the
first size is the median of the rounds' own ratios (each round's sizes measured minutes apart,
on the same machine weather), with their range. RSS is the lowest peak of the rounds: memory
the process took for a larger size stays with it when a smaller one follows.

Modes: ``threaded`` (the default settings: a bounded set of threads, each session pinned to
one), ``threaded-N`` (the same with ``OPENENV_SESSION_THREADS=N``, to compare thread counts in
one run), ``inline`` (``run_on_event_loop=True``), ``openenv`` (the ``openenv`` package's
server), and with ``--before DIR`` (a checkout of openenv-hub to compare with) ``before`` and
``before-inline``, the first two on that checkout.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from peer_venv import PEER_DIR, ensure_peer_python  # noqa: E402
from session_measure import (  # noqa: E402  (benchmarks/)
    SESSIONS_PER_ADDRESS,
    Server,
    measure,
    raise_file_limit,
    source_addresses,
)

# -- the run ----------------------------------------------------------------------------------


def servers(
    modes: list[str], before: Path | None, workers: int = 1, server_options: list[str] | None = None
) -> list[Server]:
    typed = [sys.executable, str(ROOT / "benchmarks" / "servers" / "typed.py")]
    typed += server_options or []
    if workers > 1:
        if not_ours := [m for m in modes if m == "openenv" or m.startswith("before")]:
            raise SystemExit(f"--workers {workers}: {', '.join(not_ours)} serve from one process")
        typed += ["--workers", str(workers)]
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
    for mode in modes:  # threaded-N: the default settings but N session threads
        if mode.startswith("threaded-") and mode.removeprefix("threaded-").isdigit():
            threads = {"OPENENV_SESSION_THREADS": mode.removeprefix("threaded-")}
            made[mode] = functools.partial(Server, mode, typed, threads)
    if any(mode.startswith("before") for mode in modes) and before is None:
        raise SystemExit("--modes before(-inline) needs --before DIR (a checkout of openenv-hub)")
    if unknown := [mode for mode in modes if mode not in made]:
        raise SystemExit(
            f"--modes: unknown {', '.join(unknown)}; choose from threaded, threaded-N, inline, "
            "openenv, before, before-inline"
        )
    chosen = [made[mode]() for mode in modes]
    for server in chosen:
        server.processes = workers
    return chosen


def run_interleaved(
    servers: list[Server], sizes: list[int], rounds: int, **options: Any
) -> dict[str, list[list[dict[str, Any]]]]:
    """``rounds`` rounds in which every server is given every size in turn (all servers
    started first): the machine's pace, which drifts from minute to minute, then weighs on
    every mode alike, as it does not when one mode runs all its rounds before the next. By
    mode, one list of results a round (``options``: those of :func:`run_round`)."""
    results: dict[str, list[list[dict[str, Any]]]] = {server.name: [] for server in servers}
    going = list(servers)
    try:
        for server in servers:
            server.start(max_sessions=max(sizes) + 64)
        for _ in range(rounds):
            for server in list(going):
                results[server.name].append(run_round(server, sizes, **options))
                if _failed(results[server.name][-1]):
                    going.remove(server)
                    server.stop()  # its memory and threads would weigh on the others' rounds
    finally:
        for server in servers:
            server.stop()
    return results


def run_round(
    server: Server,
    sizes: list[int],
    steps: int,
    clients: int,
    client_cpus: set[int] | None = None,
    client: str = "lean",
    total_steps: int | None = None,
    per_address: int = SESSIONS_PER_ADDRESS,
) -> list[dict[str, Any]]:
    """Each size in turn on a started server; stops at the first size that fails.
    ``total_steps``: that many steps at every size, spread over its sessions (instead of
    ``steps`` a session)."""
    results = []
    for sessions in sizes:
        each = max(1, total_steps // sessions) if total_steps else steps
        try:
            result = measure(server, sessions, each, clients, client_cpus, client, per_address)
        except (TimeoutError, RuntimeError, EOFError, OSError) as exc:
            result = {"sessions": sessions, "failed": f"{type(exc).__name__}: {exc}"}
        results.append(result)
        print(f"  {server.name:9} {_line(result)}", flush=True)
        if _failed(results):
            print(f"  {server.name}: not given more sessions", flush=True)
            break
        if (left := server.wait_idle()) is not None:  # the server closed the sessions
            print(f"  {server.name}: {left} sockets still open after 30 s", flush=True)
    return results


def _failed(results: list[dict[str, Any]]) -> bool:
    return any("failed" in r or r["errors"] for r in results)


def summarize(rounds: list[list[dict[str, Any]]], first: int) -> dict[int, dict[str, Any]]:
    """By size: each figure's median over the rounds, the ratio of steps/s to size ``first``
    (the median of the rounds' own ratios) and the range of those ratios."""
    by_size: dict[int, list[dict[str, Any]]] = {}
    ratios: dict[int, list[float]] = {}
    for results in rounds:
        measured = {r["sessions"]: r for r in results}
        base = measured.get(first)
        for size, r in measured.items():
            by_size.setdefault(size, []).append(r)
            if base and "failed" not in base and "failed" not in r:
                ratios.setdefault(size, []).append(r["steps/s"] / base["steps/s"])
    summary = {}
    for size, results in by_size.items():
        fine = [r for r in results if "failed" not in r]
        if len(fine) < len(results):
            summary[size] = next(r for r in results if "failed" in r)
            continue
        median = {k: _median([r[k] for r in fine]) for k, v in fine[0].items()
                  if isinstance(v, (int, float))}  # fmt: skip
        # The process's RSS stays up after a larger size: the lowest peak is this size's own.
        median["rss MiB"] = min(r["rss MiB"] for r in fine)
        median["KiB/session"] = median["rss MiB"] * 1024 / size
        median["errors"] = sum(r["errors"] for r in fine)
        median["limited by"] = statistics.mode(r["limited by"] for r in fine)
        median["ratios"] = ratios.get(size, [])
        summary[size] = median
    return summary


def _line(r: dict[str, Any]) -> str:
    if "failed" in r:
        return f"{r['sessions']:>6,} sessions: FAILED {r['failed']}"
    return (
        f"{r['sessions']:>6,} sessions: {r['steps']:,} steps answered, {r['steps/s']:>7,.0f} "
        f"steps/s, p50 {r['p50 ms']:.1f} ms, "
        f"p99 {r['p99 ms']:.1f} ms, RSS {r['rss MiB']:.0f} MiB ({r['KiB/session']:.0f} KiB a "
        f"session), threads {r['threads']}, "
        f"files {r['fds']}, errors {r['errors']}, server {r['server cores']:.2f} cores "
        f"({r['server us/step']:.0f} us CPU a step), "
        f"clients {r['client cores']:.2f} cores ({r['limited by']})"
        + (f"\n            e.g. {r['error_sample'][:2]}" if r["errors"] else "")
    )


def _median(values: list[Any]) -> Any:
    """The median, a whole number for whole numbers (threads, files)."""
    middle = statistics.median(values)
    return round(middle) if all(isinstance(v, int) for v in values) else middle


def report(results: dict[str, dict[int, dict[str, Any]]], sizes: list[int]) -> None:
    """The tables, from :func:`summarize` of every mode."""
    modes = list(results)
    print("\n| sessions | " + " | ".join(f"{m} steps/s (x of {sizes[0]})" for m in modes) + " |")
    print("|---:|" + "---:|" * len(modes))
    for size in sizes:
        cells = []
        for mode in modes:
            r = results[mode].get(size)
            if r is None or "failed" in r:
                cells.append("failed" if r else "-")
                continue
            ratios = r["ratios"]
            spread = ""
            if len(ratios) > 1 and size != sizes[0]:
                spread = f", rounds {min(ratios):.2f}x to {max(ratios):.2f}x"
            ratio = f"{statistics.median(ratios):.2f}x" if ratios else "-"
            cells.append(f"{r['steps/s']:,.0f} ({ratio}{spread})")
        print(f"| {size:,} | " + " | ".join(cells) + " |")
    figures = ["p50 ms", "p99 ms", "server us/step", "loop us/step", "rss MiB", "KiB/session"]
    figures += ["threads", "fds"]
    figures.append("errors")
    figures.append("limited by")
    print("\n| sessions | mode | " + " | ".join(figures) + " |")
    print("|---:|---|" + "---:|" * len(figures))
    for size in sizes:
        for mode in modes:
            r = results[mode].get(size)
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
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        metavar="N",
        help="give the sizes in turn N times to the same server; the tables give medians",
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="start every mode's server first, and give each round to every mode in turn "
        "(fairer between modes on a machine whose pace drifts)",
    )
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument(
        "--sessions-per-address",
        type=int,
        default=SESSIONS_PER_ADDRESS,
        metavar="N",
        help="past N sessions, the clients connect from several loopback addresses, N sessions "
        "each at most (default %(default)s: finding a free port slows as an address's fill)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        metavar="S",
        help="the typed server closes sessions idle for S seconds (default: the server's, 300); "
        "a session opened first waits, idle, for every other to open",
    )
    parser.add_argument(
        "--ping-timeout",
        type=float,
        metavar="S",
        help="the typed server waits S seconds for a pong before it closes the connection "
        "(default: the server's, 20)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve the typed environment from N processes behind one address (default 1)",
    )
    parser.add_argument(
        "--modes",
        default="threaded,inline,openenv",
        help="comma-separated: threaded, threaded-N (N session threads), inline, openenv, "
        "before, before-inline (default: %(default)s)",
    )
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
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give 1 or more")
    if not 1 <= args.workers <= 64:
        parser.error(f"--workers {args.workers}: give 1 to 64")
    server_cpus, client_cpus = _pinning(args.pin)
    sizes = [int(s) for s in args.sizes.split(",")]
    soft, hard = raise_file_limit(max(sizes) + 4096)  # one process may hold every session
    _check_file_limit(hard, max(sizes), args.workers, args.clients)
    load = os.getloadavg()
    print(
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
        f"open-file limit {hard:,} (was {soft:,}); "
        + (f"server: {args.workers} processes; " if args.workers > 1 else "")
        + _sources_said(max(sizes), args.sessions_per_address)
        + (
            f"{args.total_steps} steps a size"
            if args.total_steps
            else f"{args.steps} steps per session"
        )
        + f", {args.clients} client processes"
        + (f", {args.rounds} rounds (medians)" if args.rounds > 1 else "")
        + (
            f"; server on CPUs {sorted(server_cpus)}, clients on {sorted(client_cpus or ())}"
            if server_cpus
            else ""
        ),
        flush=True,
    )
    options = {
        "steps": args.steps,
        "clients": args.clients,
        "client_cpus": client_cpus,
        "client": args.client,
        "total_steps": args.total_steps,
        "per_address": args.sessions_per_address,
    }
    server_options = [f"--idle-timeout={args.idle_timeout}"] if args.idle_timeout else []
    if args.ping_timeout:
        server_options.append(f"--ping-timeout={args.ping_timeout}")
    chosen = servers(args.modes.split(","), args.before, args.workers, server_options)
    for server in chosen:
        server.cpus = server_cpus
    if args.interleave:
        by_mode = run_interleaved(chosen, sizes, args.rounds, **options)
    else:
        by_mode = {}  # one mode after the other
        for server in chosen:
            by_mode |= run_interleaved([server], sizes, args.rounds, **options)
    results = {name: summarize(rounds, sizes[0]) for name, rounds in by_mode.items()}
    report(results, sizes)
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")


def _check_file_limit(limit: int, sessions: int, workers: int, clients: int) -> None:
    """Refuse, naming the way out, a run whose processes would need more open files than the
    limit: a socket a session on each side (the server's processes get an uneven share, by
    the hash of each connection: a few percent over the even one is kept free)."""
    for side, processes, option in (
        ("server", workers, "--workers"),
        ("client", clients, "--clients"),
    ):
        share = -(-sessions // processes)
        if share * 1.05 + 128 > limit:
            least = next(
                n for n in range(processes, 1025) if -(-sessions // n) * 1.05 + 128 <= limit
            )
            raise SystemExit(
                f"{sessions:,} sessions are {share:,} a {side} process, over the open-file limit "
                f"{limit:,} (this process may not raise it): give {option} {least} or more"
            )


def _sources_said(sessions: int, per_address: int) -> str:
    sources = source_addresses(sessions, per_address)
    return f"clients from {', '.join(sources)} in turn; " if sources else ""


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
