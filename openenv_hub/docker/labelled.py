"""The containers and Swarm services on the engine that carry given labels: listed as plain
records, and removed (for ``openenv ps``/``stop`` and the reaper of a process that died).

Example::

    for found in labelled_objects({"openenv-hub.managed": "true"}):
        print(found.kind, found.name, found.status)

Layer: services.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from openenv_hub.docker.engine import docker_client, sdk_api_error, sdk_not_found

__all__ = ["EngineObject", "labelled_objects", "remove_object"]


@dataclass(frozen=True)
class EngineObject:
    """A container or a Swarm service: its kind, id, name, status and labels."""

    kind: str  # "container" or "service"
    id: str
    name: str
    status: str
    labels: Mapping[str, str] = field(default_factory=dict)


def labelled_objects(wanted: Mapping[str, str]) -> list[EngineObject]:
    """The services (first; none where the engine is not a swarm manager), then the containers
    (running or not), that carry every label of ``wanted``.

    Raises:
        DependencyNotInstalledError: The ``docker`` package is not installed.
        DockerError: No engine answers.
    """
    client = docker_client()  # shared by the process: not closed here
    selector = {"label": [f"{key}={value}" for key, value in wanted.items()]}
    found: list[EngineObject] = []
    with contextlib.suppress(sdk_api_error()):  # not a swarm manager: no services
        for service in client.services.list(filters=selector):
            spec = service.attrs.get("Spec", {})
            replicas = spec.get("Mode", {}).get("Replicas", {}).get("Replicas", "?")
            found.append(
                EngineObject(
                    "service",
                    str(service.id),
                    str(service.name),
                    f"{replicas} replicas",
                    spec.get("Labels") or {},
                )
            )
    for container in client.containers.list(all=True, filters=selector):
        found.append(
            EngineObject(
                "container",
                str(container.id),
                str(container.name),
                str(container.status),
                container.labels,
            )
        )
    return found


def remove_object(kind: str, object_id: str) -> bool:
    """Remove the service or container (forcibly: a running one is killed); False when the
    engine has no such object any more."""
    client = docker_client()
    try:
        if kind == "service":
            client.services.get(object_id).remove()
        else:
            client.containers.get(object_id).remove(force=True)
    except sdk_not_found():
        return False
    return True
