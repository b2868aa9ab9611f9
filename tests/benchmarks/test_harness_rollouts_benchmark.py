"""benchmarks/harness_rollouts.py runs as its docstring says: both paths solve the task and the
table has a row each (no figure is judged)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "harness_rollouts.py"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_one_rollout_a_path_prints_a_row_per_path() -> None:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--rollouts", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=1100,
    )
    rows = [line.split(" | ")[:2] for line in out.stdout.splitlines() if line.startswith("| ")]
    assert rows == [["| path", "solved"], ["| direct", "1/1"], ["| environment", "1/1"]]
    assert "failed" not in out.stdout
