"""The Space image: validated at the docker level (the escape suite also runs inside it, see
``test_escape.py``), and what it does where the container may not make namespaces."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from coding_support import IMAGE, Target

LABEL = ["--label", "openenv-test=coding-env"]

pytestmark = [pytest.mark.slow, pytest.mark.docker]


def test_validate_level_docker(docker_validation: dict[str, Any]) -> None:
    """The README's 'docker' block (see the docker_validation fixture)."""
    failed = [c for c in docker_validation["checks"] if not c["ok"]]
    assert failed == []
    names = {c["name"] for c in docker_validation["checks"]}
    assert {"docker_build", "docker_run", "reset", "step", "websocket"} <= names


def test_in_the_image_metadata_says_memory_is_bounded_per_process(docker_target: Target) -> None:
    """A container cannot make cgroups of its own: the server says so rather than claim a bound."""
    description = httpx.get(f"{docker_target.base_url}/metadata", timeout=30).json()["description"]
    assert description.startswith("Memory bounded per process only (no cgroup"), description
    observation: Any = docker_target.run("import ctypes\nctypes.CDLL(None).unshare(0x10000000)")
    assert observation.result == "-1", observation  # the seccomp filter holds in the image too


def _wait_for_exit(engine: Any, container: Any, timeout_s: float = 90) -> str:
    deadline = time.monotonic() + timeout_s
    while container.running():
        assert time.monotonic() < deadline, "the server kept running without a sandbox"
        time.sleep(0.2)
    return str(container.logs())


def test_without_namespaces_the_server_refuses_to_start(docker_image: str, engine: Any) -> None:
    """Docker's default seccomp profile, like most hosted container runtimes, forbids the
    unprivileged user namespaces bubblewrap needs: the server says so and stops."""
    container = engine.run_container(
        docker_image, env={"PORT": str(engine.free_port())}, extra_args=LABEL
    )
    try:
        logs = _wait_for_exit(engine, container)
    finally:
        container.remove()
    assert "The coding environment cannot sandbox code here" in logs
    assert "CODING_ENV_UNSAFE_NO_SANDBOX=1" in logs


def test_unsafe_no_sandbox_serves_and_says_so(docker_image: str, engine: Any) -> None:
    port = engine.free_port()
    env = {"PORT": str(port), "CODING_ENV_UNSAFE_NO_SANDBOX": "1"}
    container = engine.run_container(docker_image, env=env, extra_args=LABEL)
    try:
        base_url = f"http://127.0.0.1:{port}"
        engine.wait_http(f"{base_url}/health", timeout_s=90, container=container)
        metadata = httpx.get(f"{base_url}/metadata", timeout=30).json()
    finally:
        container.remove()
    assert metadata["description"].startswith("UNSAFE: no sandbox")
    assert docker_image == IMAGE
