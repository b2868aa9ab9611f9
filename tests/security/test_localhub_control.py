"""LocalHub's control routes (``/_localhub/...``) and its tokens: who may script a Space's
runtime, read the request log and the build arguments, and set like counts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from openenv_hub.localhub import LocalHub

REPO = Path(__file__).resolve().parents[2]
BUILD_ARGS = {
    "BASE_IMAGE": "python:3.11-slim",
    "HF_TOKEN": "hf_build_secret_7f3a",
    "PIP_INDEX_URL": "https://builder:pw-9c2e@pypi.example.invalid/simple",
}


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    """A LocalHub with its own random tokens, a private Space of alice's and secret build args
    (Spaces are not run: no engine answers at DOCKER_HOST)."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with LocalHub(data_dir=tmp_path / "data", run_spaces=True, space_build_args=BUILD_ARGS) as hub:
        alice = {"authorization": f"Bearer {hub.token_for('alice')}"}
        body = {"name": "private-app", "type": "space", "sdk": "docker", "private": True}
        created = httpx.post(f"{hub.endpoint}/api/repos/create", json=body, headers=alice)
        assert created.status_code == 200, created.text
        yield hub


ROUTES = [
    ("GET", "/_localhub/requests", None),
    ("DELETE", "/_localhub/requests", None),
    ("GET", "/_localhub/space-runtime", None),
    ("POST", "/_localhub/spaces/alice/private-app/runtime", {"host": "http://127.0.0.1:9/evil"}),
    ("POST", "/_localhub/spaces/alice/private-app/likes", {"likes": 1000}),
]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
@pytest.mark.parametrize("caller", ["anonymous", "alice's write token", "a wrong token"])
def test_control_routes_refuse_anyone_without_the_admin_token(
    hub: LocalHub, method: str, path: str, body: dict[str, object] | None, caller: str
) -> None:
    """Threat: anything on the machine (a Space's container, a web page's fetch) moves a
    private Space's ``host`` to its own server, reads the request log or the build arguments,
    or sets like counts."""
    headers = {
        "anonymous": {},
        "alice's write token": {"authorization": f"Bearer {hub.token_for('alice')}"},
        "a wrong token": {"authorization": f"Bearer {hub.admin_token}x"},
    }[caller]
    refused = httpx.request(method, f"{hub.endpoint}{path}", json=body, headers=headers)
    assert refused.status_code == 401
    assert "admin token" in refused.json()["error"]
    info = httpx.get(
        f"{hub.endpoint}/api/spaces/alice/private-app",
        headers={"authorization": f"Bearer {hub.token_for('alice')}"},
    ).json()
    assert info["host"] == f"{hub.endpoint}/_localhub/apps/alice/private-app"
    assert info["likes"] == 0

    admin = {"authorization": f"Bearer {hub.admin_token}"}
    allowed = httpx.request(method, f"{hub.endpoint}{path}", json=body, headers=admin)
    assert allowed.status_code == 200, allowed.text


def test_health_needs_no_token(hub: LocalHub) -> None:
    """A liveness probe tells nothing about the repos."""
    assert httpx.get(f"{hub.endpoint}/_localhub/health").json() == {"ok": True}


def test_what_control_routes_show_has_no_credentials(hub: LocalHub) -> None:
    """Threat: the build arguments (a token, an index URL with a password) and a token sent in
    a query string are shown to whoever reads the control routes."""
    httpx.get(f"{hub.endpoint}/api/spaces", params={"search": "app", "token": "hf_query_secret"})
    admin = {"authorization": f"Bearer {hub.admin_token}"}
    runtime = httpx.get(f"{hub.endpoint}/_localhub/space-runtime", headers=admin).json()
    log = httpx.get(f"{hub.endpoint}/_localhub/requests", headers=admin).text
    shown = str(runtime) + log + str(hub.space_runtime) + str(hub.requests())
    for secret in ("hf_build_secret_7f3a", "pw-9c2e", "hf_query_secret"):
        assert secret not in shown
    assert runtime["buildArgs"] == {
        "BASE_IMAGE": "python:3.11-slim",
        "HF_TOKEN": "***",
        "PIP_INDEX_URL": "https://***@pypi.example.invalid/simple",
    }
    assert "search=app&token=%2A%2A%2A" in log


def test_the_demo_tokens_work_only_where_asked_for(hub: LocalHub) -> None:
    """Threat: a LocalHub started for development accepts ``hf_alice_write``, which anything on
    the machine can guess, and so writes to alice's repos or reads her private ones."""
    whoami = f"{hub.endpoint}/api/whoami-v2"
    assert httpx.get(whoami, headers={"authorization": "Bearer hf_alice_write"}).status_code == 401
    assert hub.token_for("alice").startswith("hf_") and hub.token_for("alice") != "hf_alice_write"
    mine = httpx.get(whoami, headers={"authorization": f"Bearer {hub.token_for('alice')}"})
    assert mine.json()["name"] == "alice"
    assert hub.token_for("alice") != LocalHub().token_for("alice")


def test_the_command_line_prints_a_new_admin_token_each_start(tmp_path: Path) -> None:
    """Random user and admin tokens, printed once on the terminal as Jupyter prints its own."""
    command = [sys.executable, "-m", "openenv_hub.localhub", "--port", "0", "--no-spaces"]
    env = {k: v for k, v in os.environ.items() if k != "OPENENV_LOCALHUB_ADMIN_TOKEN"}
    proc = subprocess.Popen(
        [*command, "--data", str(tmp_path)], cwd=REPO, stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(12)]
        endpoint = lines[0].split()[-1]
        (admin_line,) = [line for line in lines if line.startswith("admin token")]
        admin_token = admin_line.split()[-1]
        assert admin_token.startswith("localhub_admin_") and len(admin_token) > 30
        assert not any("hf_alice_write" in line for line in lines)
        requests = f"{endpoint}/_localhub/requests"
        assert httpx.get(requests).status_code == 401
        ok = httpx.get(requests, headers={"authorization": f"Bearer {admin_token}"})
        assert ok.status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        if proc.stdout is not None:
            proc.stdout.close()
