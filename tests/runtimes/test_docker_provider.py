"""``from_docker_image`` on the CI engine: images made by ``openenv build``, driven async and
sync; a failing container reports its log; nothing is left behind, even by a killed process."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from child_processes import end_child, start_child
from echo_env import CallToolAction, EchoEnv
from runtime_support import containers, wait_until

from openenv_hub import GenericEnvClient
from openenv_hub.errors import ImageNotFoundError, ServerStartError
from openenv_hub.runtimes import labels
from openenv_hub.runtimes.base import Provider
from openenv_hub.runtimes.docker import DockerProvider

pytestmark = [pytest.mark.docker, pytest.mark.slow]

MINE = f"label={labels.OWNER}={labels.owner_id()}"


@pytest.fixture(autouse=True)
def _nothing_left_behind(docker_host: str) -> Any:
    yield
    assert containers(MINE) == [], "a container of this process outlived its test"


async def test_echo_image_async_three_ways(echo_image: str) -> None:
    async with EchoEnv.from_docker_image(echo_image) as env:
        assert isinstance(env.provider, DockerProvider) and isinstance(env.provider, Provider)
        assert containers(MINE, "status=running") == [env.provider.container.short_id]
        await env.reset()
        result = await env.step(
            CallToolAction(tool_name="echo_message", arguments={"message": "from docker"})
        )
        assert result.observation.result["data"] == "from docker"
    assert containers(MINE) == []  # closing the client removed the container

    env = await EchoEnv.from_docker_image(echo_image, message_timeout_s=5.0)
    try:
        assert env.options.message_timeout_s == 5.0
        assert await env.call_tool("echo_with_length", message="Hi") == {
            "message": "Hi",
            "length": 2,
        }
    finally:
        await env.close()
    assert containers(MINE) == []


def test_echo_image_sync(echo_image: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    with EchoEnv.from_docker_image(echo_image, env_vars={"LOG_LEVEL": "debug"}).sync() as env:
        waits = [(r.task, r.stage) for r in caplog.records]  # type: ignore[attr-defined]
        task = f"container {env.provider.name}"  # type: ignore[attr-defined]
        assert waits == [
            (task, "starting the container"),
            (task, "waiting for /health"),
            (task, "done"),
        ]
        env.reset()
        assert env.call_tool("echo_with_length", message="sync") == {"message": "sync", "length": 4}
        provider = env.provider
        assert isinstance(provider, DockerProvider)
        environment = provider.container.attrs["Config"]["Env"]
        assert "LOG_LEVEL=debug" in environment
    assert containers(MINE) == []


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_a_fresh_init_environment_image(init_image: str, mode: str) -> None:
    action = {"message": "hello"}
    if mode == "async":
        async with GenericEnvClient.from_docker_image(init_image) as env:
            await env.reset()
            result = await env.step(action)
    else:
        with GenericEnvClient.from_docker_image(init_image).sync() as sync_env:
            sync_env.reset()
            result = sync_env.step(action)
    assert result.observation["echoed_message"] == "hello"


FAILING_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
CMD ["python3", "-c", "import sys; print('boom: no config file at /etc/app.toml', flush=True); sys.exit(3)"]
"""


def test_a_container_that_exits_at_start_shows_its_log(docker_host: str, tmp_path: Path) -> None:
    from docker_support.engine import build_image

    (tmp_path / "Dockerfile").write_text(FAILING_DOCKERFILE)
    image = build_image(tmp_path, "openenv-test-rt/exits-at-start:latest")
    secret = "s3cr3t-never-shown"
    with pytest.raises(ServerStartError) as info:
        DockerProvider.start(image, secrets={"API_KEY": secret}, startup_timeout_s=60)
    error = info.value
    print(error)
    assert error.runtime == "docker" and "exited before answering" in str(error)
    assert "boom: no config file at /etc/app.toml" in error.logs
    assert error.command.startswith("docker run") and "API_KEY" in error.command
    assert secret not in str(error) and secret not in error.command


def test_a_missing_image_says_to_build_or_pull_it(docker_host: str) -> None:
    with pytest.raises(ImageNotFoundError) as info:
        EchoEnv.from_docker_image("openenv-test-rt/never-built:latest").sync()
    assert "openenv build" in info.value.hint and "docker pull" in info.value.hint


async def test_cancelling_the_start_leaves_no_container(echo_image: str) -> None:
    task = asyncio.create_task(EchoEnv.from_docker_image(echo_image).connect())
    await asyncio.to_thread(
        wait_until, lambda: bool(containers(MINE)), timeout_s=60, what="the container exists"
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.to_thread(
        wait_until, lambda: not containers(MINE), timeout_s=60, what="the container is removed"
    )


CHILD = """
import sys, time
from openenv_hub.runtimes import labels
from openenv_hub.runtimes.docker import DockerProvider

server = DockerProvider.start(sys.argv[1])
print(labels.owner_id(), flush=True)
if sys.argv[2] == "exit":
    sys.exit(0)  # without stop(): the interpreter's exit stops it
time.sleep(600)
"""


@pytest.mark.parametrize("ending", ["exit", "SIGKILL"])
def test_the_process_ending_removes_its_containers(echo_image: str, ending: str) -> None:
    child = start_child(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(CHILD), echo_image, ending],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        assert child.stdout is not None
        owner = child.stdout.readline().strip()
        assert owner, "the child did not start its container"
        theirs = f"label={labels.OWNER}={owner}"
        if ending == "SIGKILL":
            assert containers(theirs, "status=running")
            child.send_signal(signal.SIGKILL)
        _, errors = child.communicate(timeout=60)
    finally:
        end_child(child, signal.SIGTERM)
    if ending == "exit":  # nothing left for the interpreter to warn about, the reaper included
        assert child.returncode == 0 and "Warning" not in errors, errors
    wait_until(lambda: not containers(theirs), timeout_s=60, what=f"no container of {owner}")
