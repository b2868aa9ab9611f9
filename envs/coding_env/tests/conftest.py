"""Fixtures: the coding environment served on 127.0.0.1 (in this process, or in its Docker image),
with a secret file and a secret environment variable of the server that sandboxes must not see.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from coding_env import CodeAction, CodingEnv
from coding_env.server.app import build_app
from coding_env.server.settings import SandboxSettings

ENV_DIR = Path(__file__).resolve().parents[1]
REPO = ENV_DIR.parents[1]
SECRET_VARIABLE = "CODING_ENV_TEST_SERVER_SECRET"
# Generous for a loaded 2-core machine, small enough to hit quickly.
LIMITS = {
    "step_timeout_s": 15.0,
    "cpu_time_s": 3.0,
    "memory_mb": 512,
    "max_processes": 32,
    "grading_timeout_s": 4.0,
}
IMAGE = "openenv-test/coding-env:latest"
# The least the container needs for bubblewrap (see the README): no capabilities, no root.
DOCKER_SECURITY = ["--security-opt", "seccomp=unconfined"]


@dataclass
class Target:
    """A running server and what the escape tests try to reach from inside its sandboxes."""

    base_url: str
    secret: str  # in the server's environment and in secret_path
    secret_path: str  # a file outside the sandbox, as the server sees it
    server_pid: int  # the server's process id, as the server sees it
    outside_dir: str  # a writable folder of the server's, outside the sandbox
    exists: object  # callable(path) -> bool, checked from the server's side

    def client(self) -> CodingEnv:
        return CodingEnv(base_url=self.base_url, message_timeout_s=120)

    def run(self, code: str) -> object:
        with self.client().sync() as env:
            env.reset()
            return env.step(CodeAction(code=code)).observation

    def assert_serves(self) -> None:
        """The server answers, and a new session runs code."""
        assert httpx.get(f"{self.base_url}/health", timeout=30).json() == {"status": "healthy"}
        observation = self.run("6 * 7")
        assert observation.result == "42", observation  # type: ignore[attr-defined]


class _Server:
    def __init__(self, app: object) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")  # type: ignore[arg-type]
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            assert self.thread.is_alive(), "the server thread died"
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@contextlib.contextmanager
def serve(app: object) -> Iterator[str]:
    with _Server(app) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def local_target() -> Iterator[Target]:
    secret = secrets.token_hex(16)
    outside = Path(tempfile.mkdtemp(prefix="coding-env-outside-"))
    secret_path = outside / "secret.txt"
    secret_path.write_text(secret)
    secret_path.chmod(0o644)  # readable by anyone who can see it: only the sandbox may stop it
    os.environ[SECRET_VARIABLE] = secret
    app = build_app(SandboxSettings(**LIMITS), web=False)  # type: ignore[arg-type]
    try:
        with serve(app) as base_url:
            yield Target(
                base_url, secret, str(secret_path), os.getpid(), str(outside), os.path.exists
            )
    finally:
        os.environ.pop(SECRET_VARIABLE, None)
        shutil.rmtree(outside, ignore_errors=True)


def _docker_support() -> object:
    """The repository's Docker test helpers (tests/docker_support), shared with its own tests."""
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    from docker_support import engine

    return engine


@pytest.fixture(scope="session")
def docker_image() -> str:
    """The Space image, built once per run with the bundled openenv-hub wheel."""
    engine: Any = _docker_support()
    os.environ["DOCKER_HOST"] = engine.require_docker()
    from openenv_hub.validation.docker import build_image

    no_ui = ["ENABLE_WEB_INTERFACE=false"]  # the UI is tested in this process
    build_image(ENV_DIR, IMAGE, base_image=engine.BASE_IMAGE, build_args=no_ui, quiet=True)
    return IMAGE


@pytest.fixture(scope="session")
def docker_target(docker_image: str) -> Iterator[Target]:
    engine: Any = _docker_support()
    secret = secrets.token_hex(16)
    port = engine.free_port()
    env = {f"CODING_ENV_{k.upper()}": str(v) for k, v in LIMITS.items()}
    env.update({SECRET_VARIABLE: secret, "PORT": str(port)})
    container = engine.run_container(
        docker_image, env=env, extra_args=[*DOCKER_SECURITY, "--label", "openenv-test=coding-env"]
    )
    try:
        base_url = f"http://127.0.0.1:{port}"
        engine.wait_http(f"{base_url}/health", timeout_s=90, container=container)
        home = "/home/user"
        engine.docker("exec", container.id, "sh", "-c", f"printf %s {secret} > {home}/secret.txt")

        def exists(path: str) -> bool:
            done = engine.docker("exec", container.id, "test", "-e", path, check=False)
            return bool(done.returncode == 0)

        # The server is the container's first process (CMD execs uvicorn).
        yield Target(base_url, secret, f"{home}/secret.txt", 1, home, exists)
    finally:
        container.remove()


@pytest.fixture(
    scope="session",
    params=["local", pytest.param("docker", marks=[pytest.mark.slow, pytest.mark.docker])],
)
def target(request: pytest.FixtureRequest) -> Target:
    """Each escape test runs against the server in this process, then inside the Space image."""
    name = "local_target" if request.param == "local" else "docker_target"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]
