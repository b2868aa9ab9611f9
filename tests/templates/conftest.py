"""A fresh virtual environment with openenv-hub installed from its wheel, shared by the slow tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from openenv_hub.packaging import dev_wheel


def run(command: list[str], cwd: Path | None = None, timeout_s: float = 600) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m venv`` (no system site-packages) + the openenv-hub wheel, nothing more."""
    wheel = dev_wheel()
    assert wheel is not None, "openenv-hub should run from its source tree in the test suite"
    venv = tmp_path_factory.mktemp("venv") / "venv"
    run([sys.executable, "-m", "venv", str(venv)])
    python = venv / "bin" / "python"
    run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(wheel),
        ]
    )
    return venv
