"""benchmarks/server_cpu.py runs as its docstring says and prints its table (no figure is judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "server_cpu.py"


def test_one_short_round_prints_a_row_per_server() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--count", "50"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "µs" not in line]
    assert [row.split(" | ")[0] for row in rows] == ["| this", "| openenv"], out.stdout
