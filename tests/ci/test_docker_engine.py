"""``.ci/docker/setup.sh`` and ``stop.sh``: a run stops the engine it started, and only that one.

The scripts run for real, as root, against stand-ins for ``dockerd``, ``docker`` and
``debootstrap`` on PATH (this machine's engine is shared and must keep running): the stand-in
daemon writes its pidfile and answers until it gets SIGTERM.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SETUP, STOP = REPO / ".ci" / "docker" / "setup.sh", REPO / ".ci" / "docker" / "stop.sh"

DOCKERD = """#!/bin/bash
pidfile=""
for arg in "$@"; do [ "$prev" = --pidfile ] && pidfile=$arg; prev=$arg; done
echo $$ > "$pidfile"
touch "$STUB_DIR/answering"
trap 'rm -f "$STUB_DIR/answering"; exit 0' TERM
while :; do sleep 0.1; done
"""
DOCKER = """#!/bin/bash
case "$1" in
  version) [ -f "$STUB_DIR/answering" ] ;;
  image) [ "$2" = inspect ] && echo 1; exit 0 ;;
  network) [ -f "$STUB_DIR/bridge" ] && echo bridge; exit 0 ;;
  *) exit 0 ;;
esac
"""


@pytest.fixture
def stub_engine(tmp_path: Path) -> Iterator[dict[str, str]]:
    if os.geteuid() != 0:
        pytest.skip("setup.sh runs as root (as CI does)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("dockerd", DOCKERD), ("docker", DOCKER), ("debootstrap", "#!/bin/sh\n")):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    state, cache = tmp_path / "state", tmp_path / "cache"
    cache.mkdir()
    packages = re.search(r'^PACKAGES="([^"]+)"', SETUP.read_text(), re.M)
    assert packages
    key = hashlib.sha256(f"bookworm {packages.group(1)}\n".encode()).hexdigest()[:12]
    (cache / f"rootfs-bookworm-{key}.tar").write_bytes(b"not a real rootfs")
    yield {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "STUB_DIR": str(tmp_path),
        "OPENENV_DOCKER_STATE_DIR": str(state),
        "OPENENV_DOCKER_CACHE_DIR": str(cache),
        "OPENENV_DEBIAN_SUITE": "bookworm",
    }
    pidfile = state / "docker.pid"
    if pidfile.is_file():  # the test failed before stop.sh: end the stand-in daemon
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pidfile.read_text()), signal.SIGTERM)


def _run(script: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["bash", str(script)], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_only_the_run_that_started_the_engine_is_told_so_and_stop_stops_it(
    stub_engine: dict[str, str],
) -> None:
    first = _run(SETUP, stub_engine)
    assert "export OPENENV_DOCKER_STARTED=1" in first.splitlines()
    assert first.splitlines()[-1].startswith("export DOCKER_HOST=unix://")
    pidfile = Path(stub_engine["OPENENV_DOCKER_STATE_DIR"]) / "docker.pid"
    pid = int(pidfile.read_text())
    saved = (Path(stub_engine["OPENENV_DOCKER_STATE_DIR"]) / "env").read_text()
    assert "OPENENV_DOCKER_STARTED" not in saved  # other runs read this file
    again = _run(SETUP, stub_engine)  # a second run finds it answering: it did not start it
    assert "OPENENV_DOCKER_STARTED" not in again

    _run(STOP, stub_engine)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists() and not pidfile.exists()


def test_an_engine_with_the_default_bridge_network_is_refused(
    stub_engine: dict[str, str],
) -> None:
    """Containers use host networking and bind 127.0.0.1; a bridge would be a way around it."""
    (Path(stub_engine["STUB_DIR"]) / "bridge").touch()
    done = subprocess.run(
        ["bash", str(SETUP)], env=stub_engine, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "the default bridge network exists" in done.stderr
    assert "export DOCKER_HOST" not in done.stdout


def test_the_test_script_stops_only_an_engine_it_started() -> None:
    script = (REPO / "scripts" / "test.sh").read_text()
    started = script.index('if [ "${OPENENV_DOCKER_STARTED:-0}" = 1 ]; then')
    assert "stop_docker=1" in script[started : started + 80]
    assert script.count("stop_docker=1") == 1  # set there only
    on_exit = script[script.index("on_exit() {") :]
    assert 'if [ "$stop_docker" = 1 ]; then bash .ci/docker/stop.sh; fi' in on_exit[:500]
    assert "trap on_exit EXIT" in script
    assert "python3-venv" in script
