"""Helpers of the coding environment's tests: the limits they run under, a served app, and
the ``Target`` the escape suite attacks (named uniquely so no other conftest shadows it)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn
from coding_env import CodeAction, CodingEnv

ENV_DIR = Path(__file__).resolve().parents[1]
REPO = ENV_DIR.parents[1]
SECRET_VARIABLE = "CODING_ENV_TEST_SERVER_SECRET"
# Generous for a loaded 2-core machine, small enough to hit quickly.
LIMITS = {
    "step_timeout_s": 10.0,
    "cpu_time_s": 2.0,
    "memory_mb": 512,
    "max_processes": 32,
    "grading_timeout_s": 4.0,
}
IMAGE = "openenv-coding-env:latest"  # the tag `openenv validate --level docker` builds
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
        ready = getattr(getattr(self.server.config.app, "state", None), "web_ui_ready", None)
        assert ready is None or ready.wait(120), "the web UI was not built in 120 s"
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def readme_docker_line() -> list[str]:
    """The README's block that validates the Docker image, as words."""
    import shlex
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from doc_blocks import doc_block

    return shlex.split(doc_block(str((ENV_DIR / "README.md").relative_to(REPO)), "docker").code)


@contextlib.contextmanager
def serve(app: object) -> Iterator[str]:
    with _Server(app) as base_url:
        yield base_url
