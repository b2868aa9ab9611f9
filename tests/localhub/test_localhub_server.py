"""The LocalHub class, the ASGI wrapper and the command line."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from openenv_hub.localhub import DEMO_TOKENS, LocalHub, User, create_app
from openenv_hub.localhub.storage import RepoKey, RepoMeta

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_lifecycle_and_addresses(tmp_path: Path) -> None:
    hub = LocalHub(data_dir=tmp_path, tokens=DEMO_TOKENS)
    assert repr(hub) == "LocalHub(stopped)"
    with hub:
        assert hub.running
        assert hub.endpoint == f"http://127.0.0.1:{hub.port}"
        assert httpx.get(f"{hub.endpoint}/_localhub/health").json() == {"ok": True}
        assert hub.token_for("alice") == "hf_alice_write"
        assert hub.token_for("alice", "read") == "hf_alice_read"
        assert hub.url("alice/x", "model") == f"{hub.endpoint}/alice/x"
        assert hub.git_url("org/x") == f"{hub.endpoint}/spaces/org/x"
        assert hub.git_url("org/x", "dataset", token="hf_bob_write") == (
            f"http://bob:hf_bob_write@127.0.0.1:{hub.port}/datasets/org/x"
        )
        with pytest.raises(RuntimeError, match="already running"):
            hub.start()
        with pytest.raises(KeyError, match="known users"):
            hub.token_for("carol")
    assert not hub.running
    assert (tmp_path / "repos").is_dir()


def test_temporary_data_dir_is_removed() -> None:
    with LocalHub() as hub:
        data_dir = hub.data_dir
        assert data_dir.is_dir()
    assert not data_dir.exists()


def test_custom_tokens() -> None:
    tokens: dict[str, User | dict[str, Any]] = {
        "t-carol": {"name": "carol", "orgs": ["team"], "role": "write"},
        "t-dave": User("dave", role="read"),
    }
    with LocalHub(tokens=tokens) as hub:
        headers = {"authorization": "Bearer t-carol"}
        whoami = httpx.get(f"{hub.endpoint}/api/whoami-v2", headers=headers).json()
        assert (whoami["name"], whoami["orgs"][0]["name"]) == ("carol", "team")
        old = httpx.get(
            f"{hub.endpoint}/api/whoami-v2", headers={"authorization": "Bearer hf_bob_write"}
        )
        assert old.status_code == 401


def test_unexpected_errors_become_json_500(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LocalHub(data_dir=tmp_path) as hub:
        store = hub._context().store
        store.create(RepoKey("model", "alice", "m"), RepoMeta(), files={"a": b"a"}, author="alice")

        def broken(*_: object) -> None:
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(store, "read_meta", broken)
        with httpx.Client() as client:
            response = client.get(f"{hub.endpoint}/api/models/alice/m")
            assert response.status_code == 500
            assert "disk on fire" in response.json()["error"]
            assert client.get(f"{hub.endpoint}/_localhub/health").status_code == 200


async def test_asgi_app_never_raises(tmp_path: Path) -> None:
    app = create_app(tmp_path)

    async def exploding(scope: object, receive: object, send: object) -> None:
        raise ValueError("boom")

    app.api = exploding  # type: ignore[assignment]
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.get("/anything")
    assert response.status_code == 500
    assert response.headers["x-error-message"].startswith("LocalHub internal error")
    assert app.context.log.entries()[-1]["status"] == 500


def test_command_line_prints_endpoint_and_tokens(tmp_path: Path) -> None:
    """With --demo-tokens, and the admin token from the environment (so not printed)."""
    command = [sys.executable, "-m", "openenv_hub.localhub", "--port", "0", "--demo-tokens"]
    env = {**os.environ, "OPENENV_LOCALHUB_ADMIN_TOKEN": "admin-from-the-environment"}
    proc = subprocess.Popen(
        [*command, "--data", str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
        env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("LocalHub serving on http://127.0.0.1:")
        endpoint = first.split()[-1]
        rest = [proc.stdout.readline() for _ in range(10)]
        assert any("hf_alice_write" in line for line in rest)
        assert (
            "admin token (for the control routes under /_localhub): $OPENENV_LOCALHUB_ADMIN_TOKEN\n"
            in rest
        )
        assert "admin-from-the-environment" not in "".join(rest)
        assert httpx.get(f"{endpoint}/_localhub/health").status_code == 200
        admin = {"authorization": "Bearer admin-from-the-environment"}
        assert httpx.get(f"{endpoint}/_localhub/requests", headers=admin).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        if proc.stdout is not None:
            proc.stdout.close()


def test_sigterm_with_requests_in_flight_shuts_down_without_a_traceback(tmp_path: Path) -> None:
    """Two uploads stalled half-way when SIGTERM comes: uvicorn cancels them after its grace
    period; each gets a 503 that says why, and stderr holds no traceback."""
    command = [sys.executable, "-m", "openenv_hub.localhub", "--port", "0", "--no-spaces"]
    proc = subprocess.Popen(
        [*command, "--data", str(tmp_path)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    stalled: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        for _ in range(2):
            connection = socket.create_connection(("127.0.0.1", port), timeout=30)
            connection.sendall(
                b"POST /api/repos/create HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            stalled.append(connection)
        time.sleep(0.5)  # both requests wait for the rest of their body
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
        answers = [connection.recv(4096).decode() for connection in stalled]
    finally:
        for connection in stalled:
            connection.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    for answer in answers:
        assert answer.startswith("HTTP/1.1 503 "), answer
        assert "LocalHub is shutting down" in answer
