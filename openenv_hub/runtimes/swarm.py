"""The ``swarm`` runtime: an image deployed on Docker Swarm as a service of N replicas, each
reachable on its own (the image built first from a folder or a Space, as the ``docker`` runtime
builds it).

Each replica is a server of its own (sessions live in a replica), so clients connect to one
replica each rather than through the swarm's load balancer: ``base_urls`` lists them all. On an
engine without a bridge network the tasks join the host network and replica ``k`` listens on
``PORT = base + k`` (a Go template of the task slot); elsewhere the service publishes its port
in host mode and each task gets a port of its own, read from the task's status.

The engine must be a swarm manager (``docker swarm init``). The service is labelled like every
container of this toolkit, so ``openenv ps`` lists it and ``openenv stop`` removes it.

Example::

    with DockerSwarmProvider.start("openenv-echo-env:latest", replicas=2) as service:
        clients = [EchoEnv(url).sync() for url in service.base_urls]

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openenv_hub.runtimes._reaper as _reaper
import openenv_hub.runtimes.cleanup as cleanup
import openenv_hub.runtimes.labels as labels
from openenv_hub.docker import (
    Network,
    docker_client,
    has_bridge_network,
    image_config,
    image_port,
)
from openenv_hub.docker.services import create_service
from openenv_hub.errors import DockerError, ServerStartError
from openenv_hub.runtimes.base import RuntimeBase, SpaceRef, StopsOnExit
from openenv_hub.runtimes.docker import BUILD_OPTIONS, build_folder_image, build_space_image
from openenv_hub.support.progress import Progress, report_progress
from openenv_hub.transport.local_ports import port_in_use, wait_for_health

if TYPE_CHECKING:
    from openenv_hub.docker.engine import DockerClient, Service

__all__ = ["DockerSwarmProvider", "SwarmRuntime"]

_RUNNING = "running"
_FAILED = {"failed", "rejected", "orphaned"}


class DockerSwarmProvider(StopsOnExit):
    """A Swarm service of an environment image, its replicas reachable one by one."""

    runtime = "swarm"

    def __init__(self, client: DockerClient, service: Service, *, port_base: int | None) -> None:
        self._client = client
        self.service = service
        self._port_base = port_base  # host network: replica k listens on port_base + k
        self._urls: list[str] = []
        self._stopped = False

    @property
    def name(self) -> str:
        return str(self.service.name)

    @property
    def base_url(self) -> str:
        if not self._urls:
            raise ServerStartError("The service has no replica running.", runtime=self.runtime)
        return self._urls[0]

    @property
    def base_urls(self) -> list[str]:
        return list(self._urls)

    @classmethod
    def start(
        cls,
        image: str,
        *,
        replicas: int = 2,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        name: str | None = None,
        network: Network = "auto",
        container_port: int | None = None,
        constraints: list[str] | None = None,
        startup_timeout_s: float = 120.0,
    ) -> DockerSwarmProvider:
        """Create the service and return once every replica answers ``/health``.

        Raises:
            DockerError: No engine, or it is not a swarm manager.
            ServerStartError: A replica failed or did not answer in time (with the log).
        """
        client = docker_client()
        _require_manager(client)
        config = image_config(client, image, pull="never")
        inner = container_port or image_port(config)
        host_network = network == "host" or (network == "auto" and not has_bridge_network(client))
        name = name or f"openenv-{image.rsplit('/', 1)[-1].split(':')[0]}-{uuid.uuid4().hex[:8]}"
        port_base = _port_base() if host_network else None
        variables = {**(env or {}), **(secrets or {})}
        if port_base is not None:  # "{{printf ...}}" is expanded by the swarm, per task
            variables["PORT"] = f'{port_base // 1000}{{{{printf "%03s" .Task.Slot}}}}'
        else:
            variables["PORT"] = str(inner)
        _reaper.ensure_reaper()
        service = create_service(
            client,
            image,
            name=name,
            env=variables,
            labels=labels.labels_for("swarm", source=image, replicas=str(replicas)),
            container_labels={f"{labels.PREFIX}.service": name},
            replicas=replicas,
            constraints=constraints or [],
            image_config=config,
            published_port=None if host_network else inner,
        )
        provider = cls(client, service, port_base=port_base)
        cleanup.track(provider)
        provider._wait(replicas, startup_timeout_s)
        return provider

    def scale(self, replicas: int, *, timeout_s: float = 120.0) -> None:
        """Run ``replicas`` replicas (0 keeps the service with none) and wait for them."""
        self.service.reload()
        self.service.scale(replicas)
        self._wait(replicas, timeout_s)

    def _wait(self, replicas: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with report_progress(
            f"Swarm service {self.name}", f"placing {replicas} replicas"
        ) as progress:
            running = self._wait_running(replicas, timeout_s, deadline, progress)
            urls = sorted((self._url(t) for t in running), key=lambda u: int(u.rsplit(":", 1)[1]))
            for index, url in enumerate(urls, 1):
                progress.stage(f"waiting for /health of replica {index} of {replicas}")
                try:
                    left = max(1.0, deadline - time.monotonic())
                    wait_for_health(url, timeout_s=left, progress=progress)
                except Exception as exc:
                    self._fail(f"The replica at {url} did not answer: {exc}")
        self._urls = urls

    def _wait_running(
        self, replicas: int, timeout_s: float, deadline: float, progress: Progress
    ) -> list[dict[str, Any]]:
        """The tasks of the service once ``replicas`` of them run (and no more are asked to)."""
        while True:
            tasks = self._tasks()
            failed = [t for t in tasks if t["Status"]["State"] in _FAILED]
            if failed:
                self._fail(
                    f"A replica failed: {failed[0]['Status'].get('Err', 'no reason given')}."
                )
            running = [t for t in tasks if t["Status"]["State"] == _RUNNING]
            settled = all(t["DesiredState"] == _RUNNING for t in running)
            if len(running) == replicas and settled:
                return running
            if time.monotonic() > deadline:
                self._fail(f"{len(running)} of {replicas} replicas run after {timeout_s:g} s.")
            progress.stage(f"placing {replicas} replicas ({len(running)} running)")
            time.sleep(0.2)

    def _tasks(self) -> list[dict[str, Any]]:
        return [t for t in self.service.tasks() if t.get("DesiredState") != "shutdown"]

    def _url(self, task: Mapping[str, Any]) -> str:
        if self._port_base is not None:
            return f"http://127.0.0.1:{self._port_base + int(task['Slot'])}"
        ports = task["Status"].get("PortStatus", {}).get("Ports", [])
        return f"http://127.0.0.1:{ports[0]['PublishedPort']}"

    def _fail(self, message: str) -> None:
        logs = self.logs(40)
        self.stop()
        raise ServerStartError(
            message,
            runtime=self.runtime,
            command=f"docker service create --name {self.name} ... {self.service.attrs['Spec']['TaskTemplate']['ContainerSpec']['Image']}",
            logs=logs,
            hint="Read the log above; 'docker service ps --no-trunc NAME' shows each task's state.",
        )

    def details(self) -> list[str]:
        return [f"Name  {self.name}  (openenv ps lists it; openenv stop {self.name})"]

    def logs(self, tail_lines: int = 200) -> str:
        with contextlib.suppress(Exception):
            chunks = self.service.logs(stdout=True, stderr=True, tail=tail_lines)
            return b"".join(chunks).decode(errors="replace")
        return ""

    def stop(self, timeout_s: float = 60.0) -> None:
        """Remove the service and wait until its containers are gone (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        cleanup.untrack(self)
        with contextlib.suppress(Exception):
            self.service.remove()
        selector = {"label": f"com.docker.swarm.service.name={self.name}"}
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                if not self._client.containers.list(all=True, filters=selector):
                    break
            time.sleep(0.2)
        self._urls = []


def _require_manager(client: DockerClient) -> None:
    swarm = client.info().get("Swarm", {})
    if not swarm.get("ControlAvailable"):
        state = swarm.get("LocalNodeState", "inactive")
        raise DockerError(
            f"This Docker engine is not a swarm manager (swarm state: {state}).",
            hint="Make it one with 'docker swarm init' (or point DOCKER_HOST at a manager).",
        )


def _port_base() -> int:
    """A multiple of 1000 whose next 100 ports are free (replica k gets base + k)."""
    import random

    for _ in range(50):
        base = random.randrange(20, 60) * 1000
        if not any(port_in_use("127.0.0.1", base + k) for k in range(1, 101)):
            return base
    raise DockerError("No free range of 100 ports was found for the replicas on this host.")


#: What creating a service takes (:meth:`DockerSwarmProvider.start`).
SERVICE_OPTIONS = frozenset(
    {"replicas", "env", "secrets", "name", "network", "container_port", "constraints",
     "startup_timeout_s"}
)  # fmt: skip


class SwarmRuntime(RuntimeBase):
    """A Swarm service of an image, built first from a folder or a Space; see the module."""

    name = "swarm"
    summary = "a Docker Swarm service of N replicas (the engine a swarm manager)"
    inventory = "openenv_hub.runtimes.inventory:EngineInventory"
    options = {
        "image": SERVICE_OPTIONS,
        "folder": SERVICE_OPTIONS | BUILD_OPTIONS | {"tag"},
        "space": SERVICE_OPTIONS | BUILD_OPTIONS,
    }

    def start_image(self, image: str, **options: Any) -> DockerSwarmProvider:
        return DockerSwarmProvider.start(image, **options)

    def start_folder(self, path: Path, **options: Any) -> DockerSwarmProvider:
        build = {key: options.pop(key) for key in ("tag", *BUILD_OPTIONS) if key in options}
        return DockerSwarmProvider.start(build_folder_image(path, **build), **options)

    def start_space(self, space: SpaceRef, **options: Any) -> DockerSwarmProvider:
        build = {key: options.pop(key) for key in BUILD_OPTIONS if key in options}
        return DockerSwarmProvider.start(build_space_image(space, **build)[1], **options)
