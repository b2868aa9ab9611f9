"""The Docker engine at ``DOCKER_HOST``: a client of it (the ``docker`` SDK), and the CLI's check.

One SDK client per engine and process is shared (its connections are pooled) and closed at
exit. Without an engine, both say where they looked and how to point at one.

Layer: services.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import subprocess
import threading
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

from openenv_hub.errors import DependencyNotInstalledError, DockerError
from openenv_hub.support.settings import docker_host

if TYPE_CHECKING:
    import docker

    # the SDK's types, named here so that no module outside this package imports the SDK
    from docker import DockerClient as DockerClient
    from docker.models.containers import Container as Container
    from docker.models.services import Service as Service

__all__ = [
    "DEFAULT_SOCKET",
    "docker_client",
    "has_bridge_network",
    "require_engine",
    "sdk_api_error",
    "sdk_error",
    "sdk_errors",
    "sdk_not_found",
    "sdk_types",
]

DEFAULT_SOCKET = "/var/run/docker.sock"  # docker's own default without DOCKER_HOST (not Windows)

_CLIENTS: dict[tuple[int, str], docker.DockerClient] = {}
_CLIENTS_LOCK = threading.Lock()


def docker_client() -> docker.DockerClient:
    """A client of the engine at ``DOCKER_HOST`` (or the default socket) that answers.

    One client per engine and process, shared (its connections are pooled) and closed at exit.

    Raises:
        DependencyNotInstalledError: The ``docker`` package is not installed.
        DockerError: No engine answers.
    """
    try:
        import docker
    except ImportError:
        raise DependencyNotInstalledError(
            "docker", "docker", feature="The Docker runtime"
        ) from None
    host = docker_host() or ""
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
    host = docker_host() or f"the default socket {DEFAULT_SOCKET}"
    raise DockerError(
        f"No Docker engine answers at {host}: {str(exc)[:300]}",
        hint="Start one, or point DOCKER_HOST at a running engine, "
        "e.g. export DOCKER_HOST=unix:///path/to/docker.sock",
    ) from None


def require_engine() -> str:
    """The docker CLI's path, once an engine answers it; else a :class:`DockerError`."""
    cli = shutil.which("docker")
    if cli is None:
        raise DockerError(
            "The docker command is not installed.",
            hint="Install Docker (e.g. 'apt-get install docker.io'), then run the command again.",
        )
    done = subprocess.run(
        [cli, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        host = docker_host() or "the default socket /var/run/docker.sock"
        raise DockerError(
            f"No Docker engine answers at {host}: {done.stderr.strip()[:300]}",
            hint="Start one, or point DOCKER_HOST at a running engine, "
            "e.g. export DOCKER_HOST=unix:///path/to/docker.sock",
        )
    return cli


def has_bridge_network(client: docker.DockerClient) -> bool:
    """Whether the engine has its default ``bridge`` network (private engines may not)."""
    return any(network.name == "bridge" for network in client.networks.list(names=["bridge"]))


def sdk_error() -> type[Exception]:
    """The base class of the SDK's own errors (``docker.errors.DockerException``)."""
    import docker

    return docker.errors.DockerException  # type: ignore[no-any-return]


def sdk_api_error() -> type[Exception]:
    """What the SDK raises when the engine answered with an error (``docker.errors.APIError``)."""
    import docker

    return docker.errors.APIError  # type: ignore[no-any-return]


def sdk_not_found() -> type[Exception]:
    """What the SDK raises when the engine has no such object (``docker.errors.NotFound``)."""
    import docker

    return docker.errors.NotFound  # type: ignore[no-any-return]


def sdk_types() -> ModuleType:
    """The SDK's ``docker.types`` (mounts, log configs, service specs), imported here."""
    import docker.types

    return docker.types  # type: ignore[no-any-return]


def sdk_errors() -> tuple[type[Exception], ...]:
    """What a call of the SDK raises when the engine refuses or does not answer: its own errors
    and its HTTP library's (for ``except``)."""
    import requests

    return (sdk_error(), requests.RequestException)
