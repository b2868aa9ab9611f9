"""What one hop to a thread and back costs on this machine, with no openenv-hub code in it.

    python benchmarks/handoff.py

A session's thread gets every call of a threaded environment the same way: the event loop puts
the call on a queue, the thread runs it and hands the result back with
``call_soon_threadsafe``. Here the call does nothing (``int()``), so what is timed is the hop
alone, the least any server that keeps a thread per session pays per step over running the call
on the loop. Median of 5,000 round trips, with the threads free to run on any core and with the
process on one core. ``benchmarks/core.py`` prints it beside what the 0.7x target leaves.
"""

from __future__ import annotations

import asyncio
import os
import queue
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

HOPS = 5000


def _serve(calls: queue.SimpleQueue[Any]) -> None:
    while (item := calls.get()) is not None:
        loop, future, fn = item
        loop.call_soon_threadsafe(future.set_result, fn())


async def _hops(count: int) -> float:
    calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
    thread = threading.Thread(target=_serve, args=(calls,), daemon=True)
    thread.start()
    loop = asyncio.get_running_loop()
    times = []
    for _ in range(count):
        started = time.perf_counter_ns()
        future = loop.create_future()
        calls.put((loop, future, int))
        await future
        times.append(time.perf_counter_ns() - started)
    calls.put(None)
    thread.join()
    return statistics.median(times) / 1000


def hop_us(count: int = HOPS) -> float:
    """The median µs of a loop-to-thread-and-back round trip of a call that does nothing."""
    return asyncio.run(_hops(count))


def on_one_core(measure: Callable[[], float]) -> float:
    """``measure()`` with this process (and the threads it starts) on one core."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        return measure()
    finally:
        os.sched_setaffinity(0, cores)


def main() -> None:
    free = [hop_us() for _ in range(5)]
    pinned = [on_one_core(hop_us) for _ in range(5)]
    print(f"loop -> thread -> loop, a call that does nothing, median of {HOPS:,} (5 runs), µs:")
    print(f"  threads on any core: {statistics.median(free):5.1f}  {[round(x, 1) for x in free]}")
    print(
        f"  process on one core: {statistics.median(pinned):5.1f}  {[round(x, 1) for x in pinned]}"
    )


if __name__ == "__main__":
    main()
