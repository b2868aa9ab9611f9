"""``openenv serve``: URLs, refusals, and --reload picking up an edit."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_processes import end_child, start_child

from openenv_hub.network import free_port


def test_refuses_a_port_in_use(cli: Callable[..., Any], rendered_env: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", rendered_env, "--port", port)
    assert result.code == 1
    assert f"Port {port} on 127.0.0.1 is already in use" in result.err
    assert f"--port {port + 1}" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize("port", ["70000", "0", "-1"])
def test_refuses_a_port_out_of_range(
    cli: Callable[..., Any], rendered_env: Path, port: str
) -> None:
    result = cli("serve", rendered_env, "--port", port)
    assert result.code == 2 and "Invalid value for '--port'" in result.err, result.text
    assert "Traceback" not in result.text and "Unexpected error" not in result.text


def test_refuses_an_app_that_does_not_import(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    manifest = root / "openenv.yaml"
    manifest.write_text(
        manifest.read_text().replace("my_env.server.app:app", "my_env.server.nope:app")
    )
    result = cli("serve", root, "--port", free_port())
    assert result.code == 1
    assert "does not import" in result.err and "Traceback" not in result.err


def test_a_syntax_error_is_reported_with_file_and_line_as_validate_does(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    broken = root / "my_env" / "server" / "environment.py"
    lines = broken.read_text().splitlines()
    lines[5] = "def broken(:"
    broken.write_text("\n".join(lines) + "\n")
    where = f"({broken}, line 6)"
    for name in [m for m in sys.modules if m.split(".")[0] == "my_env"]:
        del sys.modules[name]  # another test's my_env, imported in this process, would be served
    served = cli("serve", root, "--port", free_port())
    assert served.code == 1 and "Unexpected error" not in served.err
    assert f"does not import: SyntaxError: invalid syntax {where}" in served.err
    assert "def broken(:" in served.err
    validated = cli("validate", root, "--level", "import", "--json")
    assert f"SyntaxError: invalid syntax {where}" in validated.out


def test_refuses_a_folder_without_manifest(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("serve", tmp_path)
    assert result.code == 1
    assert "No openenv.yaml" in result.err and "openenv init" in result.err


def _reply(base_url: str) -> str | None:
    try:
        reply = httpx.post(
            f"{base_url}/step", json={"action": {"message": "hi"}}, timeout=2, trust_env=False
        )
    except httpx.HTTPError:
        return None
    return str(reply.json()["observation"]["echoed_message"]) if reply.status_code == 200 else None


def _poll(base_url: str, expected: str, timeout_s: float) -> str | None:
    deadline, seen = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        seen = _reply(base_url)
        if seen == expected:
            return seen
        time.sleep(0.2)
    return seen


@pytest.mark.slow
def test_reload_picks_up_an_edit(new_env: Callable[[], Path]) -> None:
    root = new_env()
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "openenv_hub_cli.main",
        "serve",
        str(root),
        "--port",
        str(port),
        "--reload",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = start_child(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        assert _poll(base_url, "hi", 30) == "hi"
        code = root / "my_env" / "server" / "environment.py"
        code.write_text(
            code.read_text().replace(
                "echoed_message=action.message,", "echoed_message=action.message.upper(),"
            )
        )
        assert _poll(base_url, "HI", 30) == "HI"
        server.terminate()
        output, _ = server.communicate(timeout=20)
    finally:
        end_child(server, signal.SIGTERM)
    assert f"{base_url}/docs" in output
    assert "UI" in output
