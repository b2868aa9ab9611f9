"""Each reference environment's ``NAME-server`` script starts as ``python -m openenv_hub.server``
does (the Space images' command): on ``$OPENENV_HOST`` and ``$PORT``, with the server's settings,
and a bad ``$PORT`` is a clear error."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import tomllib
from serving import free_port

REPO = Path(__file__).resolve().parents[2]
ENVS = sorted(p.name for p in (REPO / "envs").iterdir() if (p / "openenv.yaml").is_file())


def script(env: str) -> str:
    """Python code that runs the environment's server script as its console script would."""
    with (REPO / "envs" / env / "pyproject.toml").open("rb") as file:
        target = tomllib.load(file)["project"]["scripts"][f"{env.replace('_', '-')}-server"]
    module, _, function = target.partition(":")
    return f"import sys\nfrom {module} import {function}\nsys.exit({function}())"


def start(code: str, **variables: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**os.environ, "ENABLE_WEB_INTERFACE": "false", **variables},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("env", ENVS)
def test_the_script_serves_on_openenv_host_and_port_with_the_servers_settings(env: str) -> None:
    port = free_port()
    process = start(script(env), OPENENV_HOST="127.0.0.2", PORT=str(port))
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, process.communicate()
            try:
                if httpx.get(f"http://127.0.0.2:{port}/health", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, f"{env} not healthy on 127.0.0.2:{port}"
                time.sleep(0.1)
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=20)
        finally:
            process.kill()
    assert "openenv-hub server: WebSocket implementation" in err, err


@pytest.mark.parametrize("env", ENVS)
def test_a_port_that_is_not_a_number_is_a_clear_error(env: str) -> None:
    process = start(script(env), PORT="eighty")
    try:
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 2, (out, err)
    assert "'eighty' is not a port number" in err and "PORT" in err
    assert "Traceback" not in err


def test_python_dash_m_on_the_app_module_serves() -> None:
    """``python -m echo_env.server.app`` runs the same script (its app built once)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "echo_env.server.app", "--port", str(port)],
        env={**os.environ, "ENABLE_WEB_INTERFACE": "false"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "the server exited"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "not healthy within 30 s"
                time.sleep(0.1)
    finally:
        process.terminate()
        try:
            process.wait(20)
        finally:
            process.kill()
