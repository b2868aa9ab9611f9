"""What one sequential ``/ws`` step costs the server process in CPU time, context switches and
moves between cores, read from the kernel's scheduler counters (``/proc/PID/task/*/sched``).

    python benchmarks/step_switches.py
    python benchmarks/step_switches.py --one-core --before ../at-86767cf

The floor, the typed environment (calls on a session thread, and ``--inline`` on the event
loop) and the typed environment of each ``--before`` checkout are started together; in each
round every server in turn (the order reversed every other round) is sent ``--steps``
sequential steps by the bare WebSocket client of `raw_clients.py`, and its threads' counters
are read before and after. ``--one-core`` runs the client and every server on the first core
(the servers inherit the affinity), which takes the scheduler's placement out of the figures.
Linux only (``/proc``; ``se.nr_migrations`` needs a kernel with scheduler debugging, else 0).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import core
import raw_clients


def sched_counters(pid: int) -> dict[str, float]:
    """CPU time (µs), context switches and migrations of every thread of ``pid``, summed."""
    totals = {"cpu µs": 0.0, "switches": 0.0, "voluntary": 0.0, "migrations": 0.0}
    keys = {
        "se.sum_exec_runtime": ("cpu µs", 1000.0),  # given in ms
        "nr_switches": ("switches", 1.0),
        "nr_voluntary_switches": ("voluntary", 1.0),
        "se.nr_migrations": ("migrations", 1.0),
    }
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            lines = (task / "sched").read_text().splitlines()
        except OSError:  # the thread ended meanwhile
            continue
        for line in lines:
            name, _, value = line.partition(":")
            if (key := keys.get(name.strip())) is not None:
                totals[key[0]] += float(value) * key[1]
    return totals


def measure(server: core.Server, steps: int) -> dict[str, float]:
    """Steps/s, and the server's counters a step, over ``steps`` sequential steps."""
    assert server.process is not None
    raw_clients.ws_steps(server.url, core.TYPED_ACTION, 200)  # the session's thread exists
    before = sched_counters(server.process.pid)
    rate = raw_clients.ws_steps(server.url, core.TYPED_ACTION, steps)
    after = sched_counters(server.process.pid)
    calls = 1 + raw_clients.WARM_UP_STEPS + steps  # its reset and untimed steps counted too
    return {"steps/s": rate, **{k: (after[k] - before[k]) / calls for k in before}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, action="append", default=[])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--one-core", action="store_true", help="everything on the first core")
    args = parser.parse_args()
    if args.one_core:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    bench = core.ROOT / "benchmarks" / "servers"
    typed = [sys.executable, str(bench / "typed.py")]
    plan = {
        "floor": core.Server("floor", [sys.executable, str(bench / "floor.py")]),
        "typed, threads": core.Server("typed, threads", typed),
        "typed, inline": core.Server("typed, inline", [*typed, "--inline"]),
    }
    for before in args.before:
        old = before.resolve()
        name = f"typed, {old.name}"
        plan[name] = core.Server(name, typed, {"PYTHONPATH": str(old)})
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in plan}
    try:
        for server in plan.values():
            server.start()
        for number in range(args.rounds):
            names = list(plan) if number % 2 == 0 else list(plan)[::-1]
            for name in names:
                samples[name].append(measure(plan[name], args.steps))
    finally:
        for server in plan.values():
            server.stop()
    where = "client and servers on one core" if args.one_core else "the scheduler's placement"
    print(f"{args.rounds} rounds of {args.steps} steps, {where}; medians a step:")
    print(
        "| server | steps/s | server CPU µs | context switches | of them voluntary | migrations |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, taken in samples.items():
        m = {key: statistics.median(s[key] for s in taken) for key in taken[0]}
        print(
            f"| {name} | {m['steps/s']:,.0f} | {m['cpu µs']:.1f} | {m['switches']:.2f} "
            f"| {m['voluntary']:.2f} | {m['migrations']:.2f} |"
        )


if __name__ == "__main__":
    main()
