"""``DockerSwarmProvider`` on a single-node swarm of the CI engine: two replicas, each stepped by
a client of its own, scaled to zero, removed.

The engine is made a swarm manager for this module if it is not one, and put back as it was
afterwards (the swarm left, and the ``docker_gwbridge`` network it creates removed). If the
engine refuses swarm mode, the test reports the engine's exact words as an expected failure.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest
from doc_blocks import doc_block
from echo_env import EchoEnv
from runtime_support import containers

from openenv_hub.errors import DockerError
from openenv_hub.runtimes import labels
from openenv_hub.runtimes.swarm import DockerSwarmProvider

pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture(scope="module")
def swarm(docker_host: str) -> Iterator[None]:
    from docker_support.engine import docker

    def state() -> str:
        return docker("info", "--format", "{{.Swarm.LocalNodeState}}").stdout.strip()

    if state() == "active":
        yield
        return
    networks = set(docker("network", "ls", "--format", "{{.Name}}").stdout.split())
    done = docker("swarm", "init", "--advertise-addr", "127.0.0.1", check=False)
    if done.returncode != 0:
        refusal = (done.stderr or done.stdout).strip()
        print(f"docker swarm init refused: {refusal}")
        pytest.xfail(f"this engine refuses swarm mode: {refusal}")
    try:
        yield
    finally:
        docker("swarm", "leave", "--force", check=False)
        if "docker_gwbridge" not in networks:
            docker("network", "rm", "docker_gwbridge", check=False)
        assert state() == "inactive"


def test_a_manager_is_required(docker_host: str) -> None:
    from docker_support.engine import docker

    if docker("info", "--format", "{{.Swarm.ControlAvailable}}").stdout.strip() == "true":
        pytest.skip("this engine is a swarm manager already")
    with pytest.raises(DockerError) as info:
        DockerSwarmProvider.start("openenv-test-rt/echo-env:latest")
    assert "docker swarm init" in info.value.hint


def test_two_replicas_each_stepped_scaled_to_zero_and_removed(
    swarm: None, echo_image: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    service = DockerSwarmProvider.start(echo_image, replicas=2, env={"LOG_LEVEL": "debug"})
    name = service.name
    try:
        stages = [r.stage for r in caplog.records if r.task == f"Swarm service {name}"]  # type: ignore[attr-defined]
        assert stages[0] == "placing 2 replicas" and stages[-1] == "done", stages
        assert stages[-3:-1] == [
            "waiting for /health of replica 1 of 2",
            "waiting for /health of replica 2 of 2",
        ]
        assert service.runtime == "swarm" and len(set(service.base_urls)) == 2
        assert len(containers(f"label=com.docker.swarm.service.name={name}", "status=running")) == 2
        for i, url in enumerate(service.base_urls):
            with EchoEnv(url).sync() as env:
                env.reset()
                assert env.call_tool("echo_message", message=f"replica {i}") == f"replica {i}"
        service.scale(0)
        assert service.base_urls == []
        assert containers(f"label=com.docker.swarm.service.name={name}", "status=running") == []
    finally:
        service.stop()
    from docker_support.engine import docker

    listed = docker("service", "ls", "-q", "--filter", f"label={labels.OWNER}={labels.owner_id()}")
    assert listed.stdout.strip() == ""
    assert containers(f"label=com.docker.swarm.service.name={name}") == []


def test_the_documented_swarm_example(
    swarm: None, echo_image: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = doc_block("docs/runtimes.md", "swarm").code.replace("echo-env:latest", echo_image)
    exec(compile(code, "docs/runtimes.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.endswith(" Hi") for line in lines)
    mine = f"label={labels.OWNER}={labels.owner_id()}"
    from docker_support.engine import docker

    assert docker("service", "ls", "-q", "--filter", mine).stdout.strip() == ""


def test_the_swarm_runtime_builds_a_folder_and_serves_it_to_a_client(swarm: None) -> None:
    """Through the registry, a folder becomes an image (push's file selection) and a service."""
    from docker_support.engine import BASE_IMAGE, remove_images
    from runtime_support import ECHO_ENV, NO_UI

    tag = f"openenv-test-rt/swarm-folder:{uuid.uuid4().hex[:8]}"
    launcher = EchoEnv.from_folder(
        ECHO_ENV, runtime="swarm", replicas=1, tag=tag, base_image=BASE_IMAGE, build_args=[NO_UI]
    )
    try:
        with launcher.sync() as env:
            provider = env.provider
            assert isinstance(provider, DockerSwarmProvider) and len(provider.base_urls) == 1
            env.reset()
            assert env.call_tool("echo_message", message="swarm") == "swarm"
        assert containers(f"label=com.docker.swarm.service.name={provider.name}") == []
    finally:
        remove_images(tag)
