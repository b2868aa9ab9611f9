"""Ctrl-C while ``openenv install`` runs pip says that the install was interrupted, what that
leaves installed, and how to finish it; the command exits 130, as a shell reports Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

from child_processes import end_child, start_child
from hub_support import OFFLINE_PIP
from polling import wait_until

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory

SLOW_BUILD = {
    "pyproject.toml": (
        '[build-system]\nrequires = ["setuptools>=70.1"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "slow-build"\nversion = "0.1.0"\n'
    ),
    # pip runs this while it prepares the package's metadata: it waits, then fails, so an
    # interrupt that never came would install nothing either
    "setup.py": "import time\ntime.sleep(120)\nraise SystemExit('never built')\n",
}

STARTED = "Preparing metadata (pyproject.toml): started"


def test_ctrl_c_during_install_says_it_was_interrupted_and_exits_130(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path
) -> None:
    repo_id = make_space(files={**SLOW_BUILD, "slow_build_marker.txt": uuid.uuid4().hex})
    env = {**os.environ, **OFFLINE_PIP, "PIP_TARGET": str(tmp_path / "target")}
    command = [sys.executable, "-m", "openenv_hub_cli.main", "install", repo_id, "--yes"]
    process = start_child(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    try:
        wait_until(
            lambda: any(STARTED in line for line in lines) or process.poll() is not None,
            120,
            "pip preparing the package's metadata (running its setup.py)",
        )
        assert process.poll() is None, "".join(lines)
        os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C at a terminal sends
        code = process.wait(timeout=60)
        reader.join(timeout=10)
    finally:
        end_child(process)
    said = "".join(lines)
    assert code == 130, said
    assert f"Interrupted: the install of {repo_id} was stopped" in said
    assert "stay installed" in said and f"openenv install {repo_id}" in said
    assert "Traceback" not in said and not (tmp_path / "target").exists()
