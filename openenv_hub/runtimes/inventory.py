"""What providers started on the Docker engine and on a Ray cluster: listed and removed.

Containers and Swarm services labelled ``openenv-hub.managed=true`` (see :mod:`.labels`) are
this toolkit's, whichever process started them; ``owner_alive`` tells whether that process
still runs (a container whose owner is gone was left behind by a crash, unless its reaper got
to it first). Ray replicas are the named actors of the ``openenv-hub`` namespace, asked of the
cluster at ``ray_address`` (or ``$RAY_ADDRESS``, or the one this process joined) when the
``ray`` package is installed.

Example:
    >>> for item in list_managed():  # doctest: +SKIP
    ...     print(item.name, item.runtime, item.url, item.status)

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import openenv_hub.runtimes.labels as labels
from openenv_hub.docker import docker_client
from openenv_hub.errors import DependencyNotInstalledError, DockerError
from openenv_hub.settings import named_variable

__all__ = ["Managed", "list_managed", "remove_managed"]


@dataclass(frozen=True)
class Managed:
    """A container or service this toolkit started."""

    kind: str  # "container", "service" or "actor" (a Ray replica)
    id: str
    name: str
    runtime: str
    status: str
    url: str
    source: str
    owner_pid: int | None

    @property
    def owner_alive(self) -> bool:
        if self.owner_pid is None:
            return False
        try:
            os.kill(self.owner_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "owner_alive": self.owner_alive}


def _managed(kind: str, id_: str, name: str, status: str, tags: dict[str, str]) -> Managed:
    pid = tags.get(labels.OWNER_PID, "")
    return Managed(
        kind=kind,
        id=id_[:12],
        name=name,
        runtime=tags.get(labels.RUNTIME, "?"),
        status=status,
        url=tags.get(labels.URL, ""),
        source=tags.get(labels.SOURCE, ""),
        owner_pid=int(pid) if pid.isdigit() else None,
    )


def list_managed(*, ray_address: str | None = None) -> list[Managed]:
    """Every container and service of this toolkit on the engine (services first), then the
    Ray replicas when a cluster is known (without an engine, only those)."""
    asks_ray = _ray_known(ray_address)
    try:
        found = _docker_managed()
    except (DependencyNotInstalledError, DockerError):
        if not asks_ray:
            raise
        found = []
    if asks_ray:
        from openenv_hub.runtimes.ray_inventory import list_replicas

        found += [_managed("actor", *row) for row in list_replicas(ray_address)]
    return found


def _ray_known(ray_address: str | None) -> bool:
    """Whether to ask Ray: an address was given, or one is known and ray is installed."""
    if ray_address:
        return True
    import importlib.util
    import sys

    if "ray" in sys.modules and sys.modules["ray"].is_initialized():
        return True
    return bool(named_variable("RAY_ADDRESS")) and importlib.util.find_spec("ray") is not None


def _docker_managed() -> list[Managed]:
    client = docker_client()  # first: without the docker package it names the extra
    import docker

    return _engine_items(client, docker.errors.APIError)  # shared: not closed here


def _engine_items(client: Any, api_error: type[Exception]) -> list[Managed]:
    selector = {"label": f"{labels.MANAGED}=true"}
    found: list[Managed] = []
    with contextlib.suppress(api_error):  # not a swarm manager: no services
        for service in client.services.list(filters=selector):
            spec = service.attrs.get("Spec", {})
            replicas = spec.get("Mode", {}).get("Replicas", {}).get("Replicas", "?")
            found.append(
                _managed(
                    "service",
                    service.id,
                    service.name,
                    f"{replicas} replicas",
                    spec.get("Labels") or {},
                )
            )
    for container in client.containers.list(all=True, filters=selector):
        found.append(
            _managed("container", container.id, container.name, container.status, container.labels)
        )
    return found


def _matches(item: Managed, wanted: str) -> bool:
    """By name, id prefix, or (Ray replicas) the name of the deployment they belong to."""
    group = item.name.rpartition("-r")[0] if item.kind == "actor" else None
    return item.name == wanted or item.id.startswith(wanted) or group == wanted


def remove_managed(
    names: Iterable[str] = (), *, everything: bool = False, ray_address: str | None = None
) -> list[Managed]:
    """Remove the named containers/services/replicas (name or id prefix; a Ray deployment's
    name removes all its replicas), or all of them; return those.

    Raises:
        LookupError: A name that matches nothing of this toolkit's (nothing is removed then).
    """
    items = list_managed(ray_address=ray_address)
    wanted = list(names)
    if everything:
        chosen = items
    else:
        chosen = [i for i in items if any(_matches(i, w) for w in wanted)]
        missing = [w for w in wanted if not any(_matches(i, w) for i in chosen)]
        if missing:
            raise LookupError(", ".join(missing))
    docker_items = [i for i in chosen if i.kind != "actor"]
    if docker_items:
        _remove_from_engine(docker_items)
    actors = [i.name for i in chosen if i.kind == "actor"]
    if actors:
        from openenv_hub.runtimes.ray_inventory import remove_replicas

        remove_replicas(actors)
    return chosen


def _remove_from_engine(items: list[Managed]) -> None:
    client = docker_client()  # shared by the process and closed at its exit
    for item in items:
        with contextlib.suppress(Exception):
            if item.kind == "service":
                client.services.get(item.id).remove()
            else:
                client.containers.get(item.id).remove(force=True)
