"""The local Daytona's API under a body that never ends and an engine that fails a removal: a
body is refused as soon as it is over the bound (not read whole first), and a sandbox whose
container could not be removed is kept, in state ``error``, instead of reported destroyed."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from openenv_hub.localdaytona import LocalDaytona

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def daytona() -> Iterator[LocalDaytona]:
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    with LocalDaytona() as service:
        yield service


def test_a_body_over_the_bound_is_refused_before_it_ends(daytona: LocalDaytona) -> None:
    where = urlsplit(daytona.api_url)
    assert where.hostname is not None and where.port is not None
    with socket.create_connection((where.hostname, where.port), timeout=20) as connection:
        head = (
            f"POST /api/sandbox HTTP/1.1\r\nHost: {where.netloc}\r\n"
            f"Authorization: Bearer {daytona.api_key}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        connection.sendall(head.encode())
        chunk = b"x" * 65536
        for _ in range(24):  # 1.5 MB, and the body never ends: no last chunk is sent
            connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = connection.recv(4096)  # a server waiting for the end times out here
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_sandbox_whose_container_was_not_removed_is_kept_in_error(
    daytona: LocalDaytona, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from docker_support.engine import BASE_IMAGE

    base = daytona.api_url
    key = {"Authorization": f"Bearer {daytona.api_key}"}
    body = {"buildInfo": {"dockerfileContent": f"FROM {BASE_IMAGE}\n"}, "networkBlockAll": True}
    created = httpx.post(f"{base}/sandbox", json=body, headers=key, timeout=120).json()
    sandbox = f"{base}/sandbox/{created['id']}"
    engine = os.environ["DOCKER_HOST"]
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
        failed = httpx.delete(sandbox, headers=key, timeout=60)
        assert failed.status_code == 500 and "could not be removed" in failed.json()["message"]
        kept = httpx.get(sandbox, headers=key, timeout=30).json()
        assert kept["state"] == "error" and "could not be removed" in kept["errorReason"]
    finally:
        monkeypatch.setenv("DOCKER_HOST", engine)
    done = httpx.delete(sandbox, headers=key, timeout=60)
    assert done.status_code == 200 and done.json()["state"] == "destroyed"
    assert httpx.get(sandbox, headers=key, timeout=30).status_code == 404
