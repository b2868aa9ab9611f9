"""benchmarks/inprocess.py runs as its docstring says and prints its table (no figure is judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "inprocess.py"


def test_one_short_round_prints_a_row_per_measurement() -> None:
    kinds = "ws typed inline,ws echo,http typed"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--rounds", "1", "--count", "20", "--kinds", kinds],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line for line in out.stdout.splitlines() if line.startswith("| ") and "µs" not in line]
    assert [row.split(" | ")[0] for row in rows] == [f"| {k}" for k in kinds.split(",")]
    assert all(float(row.split(" | ")[2]) > 0 for row in rows), out.stdout


def test_the_openenv_package_is_measured_as_one_more_checkout() -> None:
    kinds = "http typed,ws typed inline"  # the openenv package has no inline server
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--peer", "--rounds", "1", "--count", "20", "--kinds", kinds],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line.split(" | ") for line in out.stdout.splitlines() if "| openenv |" in line]
    assert [(row[0], row[2] != "-") for row in rows] == [
        ("| http typed", True),
        ("| ws typed inline", False),
    ], out.stdout
