"""benchmarks/harness.py runs as its docstring says and prints its table (no figure is judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "harness.py"


@pytest.mark.slow
def test_a_short_run_against_the_fake_engine_prints_a_row_per_path() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--engines", "fake", "--rounds", "2", "--turns", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    rows = [line.split(" | ")[0] for line in out.stdout.splitlines() if line.startswith("| ")]
    assert rows == [
        "| path",
        "| direct",
        "| direct, ids asked",
        "| proxy chat",
        "| proxy messages",
        "| proxy responses",
    ]
    assert "the proxy's own work inside a call (its records): p50" in out.stdout
