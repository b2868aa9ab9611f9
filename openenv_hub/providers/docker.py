"""An environment server in a Docker container, started from an image with the docker SDK.

On an engine without a bridge network (``docker network ls`` shows only ``host`` and
``none``) the container joins the host network and listens on a free port given as ``PORT``;
elsewhere it keeps its own network and its port is published on 127.0.0.1. Variables and
secrets reach the container through the Engine API, never a command line. The container is
labelled (:mod:`openenv_hub.providers.labels`) and removed by :meth:`DockerProvider.stop`, at
interpreter exit, or by this process's reaper if the process is killed.

Example::

    with DockerProvider.start("openenv-echo-env:latest") as server:
        httpx.get(server.base_url + "/health")
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, NoReturn

from openenv_hub.errors import (
    ConnectError,
    DependencyNotInstalledError,
    DockerError,
    ImageNotFoundError,
    ServerStartError,
)
from openenv_hub.network import free_port, wait_for_health
from openenv_hub.providers import StopsOnExit, _cleanup, _reaper, labels

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

__all__ = [
    "DockerProvider",
    "docker_client",
    "has_bridge_network",
    "image_config",
    "image_port",
    "run_command",
]

Network = Literal["auto", "host", "bridge"]
DEFAULT_PORT = 8000
DEFAULT_SOCKET = "/var/run/docker.sock"  # docker's own default without DOCKER_HOST (not Windows)


_CLIENTS: dict[tuple[int, str], docker.DockerClient] = {}
_CLIENTS_LOCK = threading.Lock()


def docker_client() -> docker.DockerClient:
    """A client of the engine at ``DOCKER_HOST`` (or the default socket) that answers.

    One client per engine and process, shared (its connections are pooled) and closed at exit.
    """
    try:
        import docker
    except ImportError:
        raise DependencyNotInstalledError(
            "docker", "docker", feature="The Docker runtime"
        ) from None
    host = os.environ.get("DOCKER_HOST", "")
    socket_path = host.removeprefix("unix://") if host.startswith("unix://") else None
    if not host and os.name != "nt":
        socket_path = DEFAULT_SOCKET
    # docker's client leaves its socket open when it finds nothing there: check first
    if socket_path is not None and not os.path.exists(socket_path):
        _raise_no_engine(FileNotFoundError(f"no socket at {socket_path}"))
    key = (os.getpid(), host)
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(key)
        if client is not None:
            return client
        try:
            client = docker.from_env(timeout=120)
        except docker.errors.DockerException as exc:
            _raise_no_engine(exc)
        if not _CLIENTS:
            atexit.register(_close_clients)
        _CLIENTS[key] = client
        return client


def _close_clients() -> None:
    with _CLIENTS_LOCK:
        while _CLIENTS:
            _, client = _CLIENTS.popitem()
            with contextlib.suppress(Exception):
                client.close()


def _raise_no_engine(exc: Exception) -> NoReturn:
    host = os.environ.get("DOCKER_HOST", f"the default socket {DEFAULT_SOCKET}")
    raise DockerError(
        f"No Docker engine answers at {host}: {str(exc)[:300]}",
        hint="Start one, or point DOCKER_HOST at a running engine, "
        "e.g. export DOCKER_HOST=unix:///path/to/docker.sock",
    ) from None


def has_bridge_network(client: docker.DockerClient) -> bool:
    """Whether the engine has its default ``bridge`` network (private engines may not)."""
    return any(network.name == "bridge" for network in client.networks.list(names=["bridge"]))


def run_command(
    image: str,
    *,
    port: int,
    container_port: int,
    host_network: bool,
    env: Mapping[str, str],
    secret_names: list[str],
) -> str:
    """The ``docker run`` line equivalent to what was started (secret values left out)."""
    parts = ["docker run -d"]
    if host_network:
        parts.append(f"--network host -e PORT={port}")
    else:
        parts.append(f"-p 127.0.0.1:{port}:{container_port}")
    parts += [f"-e {key}={value}" for key, value in env.items() if key != "PORT"]
    parts += [f"-e {key} (secret)" for key in secret_names]
    parts.append(image)
    return " ".join(parts)


class DockerProvider(StopsOnExit):
    """An environment server running in a container this process started."""

    runtime = "docker"

    def __init__(self, client: docker.DockerClient, container: Container, base_url: str) -> None:
        self._client = client
        self.container = container
        self._base_url = base_url
        self._stopped = False
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def base_urls(self) -> list[str]:
        return [self._base_url]

    @property
    def name(self) -> str:
        return str(self.container.name)

    @classmethod
    def start(
        cls,
        image: str,
        *,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        secrets: Mapping[str, str] | None = None,
        name: str | None = None,
        network: Network = "auto",
        container_port: int | None = None,
        command: list[str] | None = None,
        pull: Literal["missing", "never"] = "missing",
        extra_labels: Mapping[str, str] | None = None,
        runtime: str = "docker",
        startup_timeout_s: float = 120.0,
    ) -> DockerProvider:
        """Run ``image`` and return once its ``/health`` answers.

        Args:
            image: The image, e.g. ``"openenv-echo-env:latest"`` (``openenv build`` makes one).
            port: The host port (default: a free one).
            env: Variables for the container.
            secrets: Variables never shown in messages or commands.
            name: The container's name (default: ``openenv-<image>-<random>``).
            network: ``"host"``, ``"bridge"`` (publish the port), or ``"auto"``: host when the
                engine has no bridge network.
            container_port: The port the server listens on inside its own network (default:
                the image's ``PORT`` variable, else its first exposed port, else 8000).
            command: Replaces the image's command.
            pull: ``"missing"`` pulls an image the engine does not have.
            extra_labels: More labels for the container.
            runtime: The runtime named in labels and messages.
            startup_timeout_s: Time allowed until ``/health`` answers.

        Raises:
            ImageNotFoundError: No such image, and it could not be pulled.
            ServerStartError: The container exited, or did not answer in time; the message has
                the last lines of its log.
            DockerError: No engine answers.
        """
        client = docker_client()
        config = image_config(client, image, pull=pull)
        host_network = network == "host" or (network == "auto" and not has_bridge_network(client))
        inner = container_port or image_port(config)
        port = port or free_port()
        variables = {**(env or {}), "PORT": str(port if host_network else inner)}
        base_url = f"http://127.0.0.1:{port}"
        spec = run_command(
            image,
            port=port,
            container_port=inner,
            host_network=host_network,
            env=variables,
            secret_names=sorted(secrets or {}),
        )
        container = _create(
            client,
            image,
            name=name or _default_name(image),
            environment={**variables, **(secrets or {})},
            labels={
                **labels.labels_for(runtime, source=image, url=base_url),
                **(extra_labels or {}),
            },
            host_network=host_network,
            ports={f"{inner}/tcp": ("127.0.0.1", port)},
            command=command,
        )
        provider = cls(client, container, base_url)
        provider.runtime = runtime
        _cleanup.track(provider)
        provider._wait_healthy(spec, startup_timeout_s)
        return provider

    def _wait_healthy(self, spec: str, timeout_s: float) -> None:
        try:
            self.container.start()
            wait_for_health(self._base_url, timeout_s=timeout_s, alive=self.running)
        except (ConnectError, _docker_errors()) as exc:
            logs = self.logs(40)
            status = self.status()
            self.stop()
            why = "exited before answering" if status == "exited" else f"failed: {exc}"
            raise ServerStartError(
                f"The container of {spec.rsplit(' ', 1)[-1]} {why}.",
                runtime=self.runtime,
                command=spec,
                logs=logs,
                url=self._base_url,
                hint="Read the log above; the server must listen on $PORT and answer /health. "
                "Run the image by hand with the command above to debug it.",
            ) from None

    def running(self) -> bool:
        return self.status() in ("created", "running")

    def status(self) -> str:
        """The container's state: ``running``, ``exited``, ... or ``removed``."""
        try:
            self.container.reload()
        except _docker_errors():
            return "removed"
        return str(self.container.status)

    def logs(self, tail_lines: int = 200) -> str:
        try:
            raw: bytes = self.container.logs(tail=tail_lines)
        except _docker_errors():
            return ""
        return raw.decode(errors="replace")

    def stop(self, timeout_s: int = 5) -> None:
        """Stop and remove the container (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        _cleanup.untrack(self)
        with contextlib.suppress(*_docker_errors_tuple()):
            self.container.stop(timeout=timeout_s)
        with contextlib.suppress(*_docker_errors_tuple()):
            self.container.remove(force=True)

    def __repr__(self) -> str:
        return f"DockerProvider({self.name}, {self._base_url})"


def _docker_errors() -> type[Exception]:
    import docker

    return docker.errors.DockerException  # type: ignore[no-any-return]


def _docker_errors_tuple() -> tuple[type[Exception], ...]:
    import requests

    return (_docker_errors(), requests.RequestException)


def _default_name(image: str) -> str:
    base = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in base)[:40]
    return f"openenv-{safe}-{uuid.uuid4().hex[:8]}"


def image_config(client: docker.DockerClient, image: str, *, pull: str) -> dict[str, Any]:
    import docker

    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        if pull == "never":
            raise ImageNotFoundError(image) from None
        try:
            repository, tag = _split_tag(image)
            found = client.images.pull(repository, tag=tag)
        except docker.errors.APIError as exc:
            raise ImageNotFoundError(image, detail=str(exc.explanation or exc)[:300]) from None
    config: dict[str, Any] = found.attrs.get("Config") or {}
    return config


def _split_tag(image: str) -> tuple[str, str]:
    if "@" in image or ":" not in image.rsplit("/", 1)[-1]:
        return image, "latest"
    repository, _, tag = image.rpartition(":")
    return repository, tag


def image_port(config: Mapping[str, Any]) -> int:
    for item in config.get("Env") or []:
        key, _, value = str(item).partition("=")
        if key == "PORT" and value.isdigit():
            return int(value)
    for exposed in config.get("ExposedPorts") or {}:
        number = str(exposed).split("/", 1)[0]
        if number.isdigit():
            return int(number)
    return DEFAULT_PORT


def _create(
    client: docker.DockerClient,
    image: str,
    *,
    name: str,
    environment: dict[str, str],
    labels: dict[str, str],
    host_network: bool,
    ports: dict[str, tuple[str, int]],
    command: list[str] | None,
) -> Container:
    _reaper.ensure_reaper()
    options: dict[str, Any] = {"network_mode": "host"} if host_network else {"ports": ports}
    container: Container = client.containers.create(
        image, command=command, name=name, environment=environment, labels=labels, **options
    )
    return container
