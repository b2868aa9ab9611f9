"""Fixtures that run the `openenv` package (the peer) in its own virtual environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from peer_venv import PEER_DIR, ensure_peer_python
from serving import ServerThread, free_port


@pytest.fixture(scope="session")
def peer_python() -> Path:
    return ensure_peer_python()


class PeerServer:
    """A server built on the peer package, started with the peer's interpreter."""

    def __init__(self, python: Path, script: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MAX_CONCURRENT_ENVS": "64"}
        # A file, not a pipe: nobody reads the log while the server runs, and a full pipe would
        # block it.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        self.process = subprocess.Popen(
            [str(python), str(PEER_DIR / script), "--port", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                self.log.seek(0)
                log = self.log.read().decode(errors="replace")
                self.log.close()
                raise RuntimeError(f"peer {script} exited: {log}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"peer {script} did not become healthy")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


@pytest.fixture(scope="session")
def peer_echo(peer_python: Path) -> Iterator[PeerServer]:
    server = PeerServer(peer_python, "echo_server.py")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def peer_typed(peer_python: Path) -> Iterator[PeerServer]:
    server = PeerServer(peer_python, "typed_server.py")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def our_echo() -> Iterator[ServerThread]:
    """Our echo environment without its rubric, like the peer's echo (which has none), so the
    two are compared on the protocol alone; tests/rubrics/test_wire.py covers the rubric."""
    from echo_env.server.environment import EchoEnvironment

    from openenv_hub import CallToolAction, CallToolObservation, create_app

    class PlainEcho(EchoEnvironment):
        rubric = None

    app = create_app(PlainEcho, CallToolAction, CallToolObservation, env_name="echo_env")
    server = ServerThread(app)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def our_typed() -> Iterator[ServerThread]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "servers"))
    from typed import app  # the twin of tests/peer/typed_server.py

    server = ServerThread(app)
    server.start()
    yield server
    server.stop()


def drive(peer_python: Path, url: str, mode: str) -> dict[str, Any]:
    """Run the peer's own clients against ``url`` (tests/peer/drive.py)."""
    done = subprocess.run(
        [str(peer_python), str(PEER_DIR / "drive.py"), "--url", url, "--mode", mode],
        capture_output=True,
        text=True,
        timeout=120,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    assert result["ok"], result.get("traceback") or done.stderr
    return result
