"""The repository as a contributor meets it: a bare ``pytest`` at its root collects every test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_a_bare_pytest_at_the_repository_root_collects_everything() -> None:
    """``pytest`` (the script, not ``python -m pytest``) does not put the root on sys.path."""
    pytest_script = Path(sys.executable).with_name("pytest")
    done = subprocess.run(
        [str(pytest_script), "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "error" not in done.stdout.splitlines()[-1]
