"""``python -m openenv_hub.server`` (what the Space images run) listens on ``$OPENENV_HOST``:
0.0.0.0 in an image, 127.0.0.1 when a runtime shares the host's network, 127.0.0.1 unset."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from serving import free_port

APP = "echo_env.server.app:app"


def test_the_interface_comes_from_openenv_host() -> None:
    port = free_port()
    env = {**os.environ, "OPENENV_HOST": "127.0.0.2", "ENABLE_WEB_INTERFACE": "false"}
    process = subprocess.Popen(
        [sys.executable, "-m", "openenv_hub.server", APP, "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "the server exited"
            try:
                if httpx.get(f"http://127.0.0.2:{port}/health", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "not healthy within 60 s"
                time.sleep(0.05)
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    finally:
        process.terminate()
        process.wait(15)
