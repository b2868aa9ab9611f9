"""Proof that the CI engine can build and serve a Space-style FastAPI image."""

from __future__ import annotations

import json
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from tests.docker_support import engine

APP = """\
import os

from fastapi import FastAPI
import uvicorn

app = FastAPI()


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok", "uid": str(os.getuid())}


if __name__ == "__main__":
    uvicorn.run(app, host="0.0.0.0", port=int(os.environ.get("PORT", "7860")))
"""

DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
RUN python3 -m venv /opt/venv \\
 && /opt/venv/bin/pip install --no-cache-dir uvicorn fastapi
RUN useradd --uid 1000 --create-home user
WORKDIR /home/user/app
COPY --chown=1000:1000 app.py .
USER 1000
ENV PATH=/opt/venv/bin:$PATH PORT=7860
HEALTHCHECK --interval=1s --timeout=3s --start-period=10s --retries=3 \\
  CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ['PORT'], timeout=2)"]
CMD ["python3", "app.py"]
"""

TAG = "openenv-hub-test/engine-proof:latest"


def test_require_docker_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setenv("OPENENV_DOCKER_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception):
        engine.require_docker()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception):
        engine.require_docker()


@pytest.mark.docker
def test_build_and_serve_fastapi_app(tmp_path: Path) -> None:
    engine.require_docker()
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)

    t0 = time.monotonic()
    engine.build_image(tmp_path, TAG)
    build_s = time.monotonic() - t0

    port = engine.free_port()
    container = engine.run_container(TAG, env={"PORT": str(port)})
    try:
        t1 = time.monotonic()
        url = f"http://127.0.0.1:{port}/health"
        assert engine.wait_http(url, timeout_s=60, container=container) == 200
        ready_s = time.monotonic() - t1
        with urllib.request.urlopen(url, timeout=5) as resp:
            assert json.loads(resp.read()) == {"status": "ok", "uid": "1000"}

        deadline = time.monotonic() + 30
        while container.health() != "healthy" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert container.health() == "healthy", container.logs()
        healthy_s = time.monotonic() - t1

        t2 = time.monotonic()
        container.stop()
        stop_s = time.monotonic() - t2
        # Exec-form CMD: the server is PID 1 and handles SIGTERM promptly.
        assert stop_s < 5, f"docker stop took {stop_s:.1f} s"
        print(
            textwrap.dedent(
                f"""
                build {build_s:.1f} s, run->/health {ready_s:.2f} s,
                run->healthy {healthy_s:.2f} s, stop {stop_s:.2f} s"""
            )
        )
    finally:
        engine.cleanup(container)
    assert engine.docker("ps", "-aq", "--filter", f"id={container.id}").stdout.strip() == ""


@pytest.mark.docker
def test_a_docker_test_has_the_time_of_a_cold_build_on_a_loaded_machine(
    request: pytest.FixtureRequest,
) -> None:
    """The suite's 300 s per test is shorter than a cold image build on a busy 2-core machine:
    a test marked ``docker`` gets 900 s unless it sets its own limit."""
    limits = [marker.args for marker in request.node.iter_markers("timeout")]
    assert limits == [(900,)], limits
