"""The local Daytona's preview URLs, driven by the ``daytona`` SDK from PyPI: the proxy refuses
a private sandbox's port without its token and with a wrong one (HTTP, and the WebSocket
handshake), passes neither the token nor the API key nor any X-Forwarded-* header on, and gives
the server its own address as Host; a sandbox has no network unless asked; an idle one stops by
itself after its auto-stop interval."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from polling import wait_until

from openenv_hub.localdaytona import LocalDaytona

pytestmark = [pytest.mark.docker, pytest.mark.slow]

TOKEN_HEADER = "x-daytona-preview-token"
SERVER = Path(__file__).with_name("sandbox_server.py")


def _sdk(daytona: LocalDaytona) -> Any:
    from daytona import Daytona, DaytonaConfig

    return Daytona(DaytonaConfig(api_key=daytona.api_key, api_url=daytona.api_url, target="local"))


def _sandbox(daytona: LocalDaytona, **params: Any) -> Any:
    from daytona import CreateSandboxFromImageParams
    from docker_support.engine import BASE_IMAGE

    return _sdk(daytona).create(CreateSandboxFromImageParams(image=BASE_IMAGE, **params))


def _serve(sandbox: Any) -> None:
    """Start :mod:`sandbox_server` on port 8000 in ``sandbox`` and wait until it listens."""
    code = base64.b64encode(SERVER.read_bytes()).decode()
    start = f"echo {code} | base64 -d > /tmp/server.py && nohup python3 /tmp/server.py > /tmp/s.log 2>&1 &"
    assert sandbox.process.exec(start).exit_code == 0
    probe = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 8000), 1)\""
    wait_until(lambda: sandbox.process.exec(probe).exit_code == 0, timeout_s=30, what="listening")


@pytest.fixture(scope="module")
def daytona() -> Iterator[LocalDaytona]:
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    with LocalDaytona() as service:
        yield service


@pytest.fixture(scope="module")
def serving(daytona: LocalDaytona) -> Iterator[tuple[Any, Any]]:
    """A private sandbox serving :mod:`sandbox_server`, and its preview link for port 8000."""
    sandbox = _sandbox(daytona)
    try:
        _serve(sandbox)
        yield sandbox, sandbox.get_preview_link(8000)
    finally:
        _sdk(daytona).delete(sandbox)


def test_http_needs_the_token_and_passes_no_credential_on(
    daytona: LocalDaytona, serving: tuple[Any, Any]
) -> None:
    _, link = serving
    url = f"{link.url}/where?x=1"
    refused = httpx.get(url)
    assert refused.status_code == 401 and TOKEN_HEADER in refused.json()["message"]
    wrong = httpx.get(url, headers={TOKEN_HEADER: link.token[:-2] + "xx"})
    assert wrong.status_code == 401 and "Invalid or expired token" in wrong.json()["message"]
    sent = {TOKEN_HEADER: link.token, "X-Forwarded-For": "10.1.2.3", "X-Custom": "kept"}
    seen = httpx.get(url, headers=sent).json()
    assert seen["path"] == "/where?x=1"
    assert seen["headers"]["host"] == "127.0.0.1:8000" and seen["headers"]["x-custom"] == "kept"
    assert TOKEN_HEADER not in seen["headers"] and "x-forwarded-for" not in seen["headers"]
    with_key = httpx.get(url, headers={"Authorization": f"Bearer {daytona.api_key}"})
    assert with_key.status_code == 200 and "authorization" not in with_key.json()["headers"]
    assert link.token not in link.url


async def test_the_websocket_handshake_needs_the_token(serving: tuple[Any, Any]) -> None:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    _, link = serving
    uri = "ws" + link.url.removeprefix("http") + "/ws"
    for headers in ({}, {TOKEN_HEADER: "not-the-token"}):
        with pytest.raises(InvalidStatus) as refused:
            async with connect(uri, additional_headers=headers, proxy=None):
                pass
        assert refused.value.response.status_code == 401
    async with connect(uri, additional_headers={TOKEN_HEADER: link.token}, proxy=None) as ws:
        seen = json.loads(await ws.recv())
        assert seen["path"] == "/ws" and seen["headers"]["host"] == "127.0.0.1:8000"
        assert TOKEN_HEADER not in seen["headers"]
        await ws.send("over the preview URL")
        assert await ws.recv() == "over the preview URL"


def test_a_public_sandbox_needs_no_token(serving: tuple[Any, Any]) -> None:
    sandbox, link = serving
    sandbox.set_public(True)
    try:
        assert httpx.get(f"{link.url}/open").status_code == 200
    finally:
        sandbox.set_public(False)
    assert httpx.get(f"{link.url}/open").status_code == 401


def test_a_port_with_nothing_on_it_is_a_bad_gateway(serving: tuple[Any, Any]) -> None:
    sandbox, link = serving
    closed = sandbox.get_preview_link(8001)
    answer = httpx.get(closed.url, headers={TOKEN_HEADER: closed.token})
    assert answer.status_code == 502 and "nothing answers on port 8001" in answer.text
    assert closed.token == link.token  # a sandbox's token opens each of its ports, as Daytona's


def test_a_sandbox_has_no_network_unless_asked(daytona: LocalDaytona) -> None:
    blocked = _sandbox(daytona)
    opened = _sandbox(daytona, network_block_all=False)
    try:
        assert blocked.network_block_all is True  # the local default: no network
        assert blocked.process.exec("ls /sys/class/net").result.split() == ["lo"]
        reach = (
            'python3 -c "import socket; '
            f"socket.create_connection(('127.0.0.1', {daytona.port}), 2); print('reached')\""
        )
        assert "reached" not in blocked.process.exec(reach).result
        assert "reached" in opened.process.exec(reach).result  # the engine's network (host here)
    finally:
        _sdk(daytona).delete(blocked)
        _sdk(daytona).delete(opened)


def test_an_idle_sandbox_stops_after_its_auto_stop_interval() -> None:
    with LocalDaytona(minute_s=0.5) as daytona:  # a minute lasts half a second here
        idle = _sandbox(daytona, auto_stop_interval=1)
        kept = _sandbox(daytona, auto_stop_interval=0)
        record = daytona.sandboxes.find(idle.id)
        wait_until(lambda: record.state == "stopped", timeout_s=20, what="auto-stopped")
        assert record.updated_at - record.last_activity_at >= 0.5  # idle for its minute first
        idle.refresh_data()
        assert idle.state.value == "stopped" and daytona.sandboxes.find(kept.id).state == "started"
        idle.start()
        assert idle.process.exec("echo again").result == "again\n"
