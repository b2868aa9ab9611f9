"""What the provider tests share: images built with ``openenv build``, and container listings.

Images are built once per session with the test base image and without the web UI (gradio
makes builds slow); with the Docker layer cache a second build of the same files is instant.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"
NO_UI = "ENABLE_WEB_INTERFACE=false"
ECHO_TAG = "openenv-test-rt/echo-env:latest"
INIT_TAG = "openenv-test-rt/my-env:latest"


@pytest.fixture(scope="session")
def docker_host() -> str:
    """The engine's DOCKER_HOST, exported for the library (skip, or fail under CI=true)."""
    from docker_support.engine import require_docker

    host = require_docker()
    os.environ["DOCKER_HOST"] = host
    return host


def openenv_build(path: Path, tag: str, *, web: bool = False) -> None:
    """``openenv build PATH --tag TAG`` with the test base image, as a user runs it (without
    the web UI unless ``web``)."""
    from docker_support.engine import BASE_IMAGE

    command = [sys.executable, "-m", "openenv_hub_cli.main", "build", str(path), "--tag", tag]
    command += ["--base-image", BASE_IMAGE, *([] if web else ["--build-arg", NO_UI])]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]


@pytest.fixture(scope="session")
def echo_image(docker_host: str) -> str:
    openenv_build(ECHO_ENV, ECHO_TAG)
    return ECHO_TAG


@pytest.fixture(scope="session")
def init_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh ``openenv init my_env`` (what the command renders)."""
    from openenv_hub_cli.init import render_env

    return render_env("my_env", tmp_path_factory.mktemp("init"), rng=random.Random(1))


@pytest.fixture(scope="session")
def init_image(docker_host: str, init_env: Path) -> str:
    openenv_build(init_env, INIT_TAG)
    return INIT_TAG


def containers(*filters: str) -> list[str]:
    """Ids of all containers (running or not) matching ``docker ps -a --filter`` filters."""
    from docker_support.engine import docker

    args = ["ps", "-aq"]
    for item in filters:
        args += ["--filter", item]
    return docker(*args).stdout.split()


def wait_until(check: Callable[[], bool], *, timeout_s: float, what: str) -> None:
    """Poll ``check`` until it is true; fail with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting until {what}")
