"""benchmarks/step_switches.py runs as its docstring says, and its counters count: on one core a
sequential server gives the core up at least once a step, and twice when the step runs on a
session's thread."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "step_switches.py"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
def test_one_short_round_on_one_core_prints_each_servers_counters() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--one-core", "--rounds", "1", "--steps", "300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    rows = {
        cells[0]: [float(c.replace(",", "")) for c in cells[1:]]
        for line in out.splitlines()
        if line.startswith("| ") and not line.startswith("| server")
        for cells in [line.strip("| \n").split(" | ")]
    }
    assert list(rows) == ["floor", "typed, threads", "typed, inline"], out
    for name, (steps_per_s, cpu_us, switches, _) in rows.items():
        assert steps_per_s > 0 and cpu_us > 0, (name, out)
        assert switches >= 0.9, (name, out)  # a sequential server sleeps at least once a step
    # on one core the session's thread and the loop each give the core up at every step (more
    # switches on a busy machine, never fewer)
    assert rows["typed, threads"][2] >= 1.9, out
    # and no more than that and the loop's answer to the client: a thread woken through a futex
    # while the loop held the GIL slept again on the GIL (5.1 to 5.2 switches a step)
    assert rows["typed, threads"][2] <= 4.0, out
