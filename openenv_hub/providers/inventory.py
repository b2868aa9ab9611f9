"""What providers started on the Docker engine: listed and removed by their labels.

Containers and Swarm services labelled ``openenv-hub.managed=true`` (see :mod:`.labels`) are
this toolkit's, whichever process started them; ``owner_alive`` tells whether that process
still runs (a container whose owner is gone was left behind by a crash, unless its reaper got
to it first).

Example:
    >>> for item in list_managed():  # doctest: +SKIP
    ...     print(item.name, item.runtime, item.url, item.status)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from openenv_hub.providers import labels
from openenv_hub.providers.docker import docker_client

__all__ = ["Managed", "list_managed", "remove_managed"]


@dataclass(frozen=True)
class Managed:
    """A container or service this toolkit started."""

    kind: str  # "container" or "service"
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


def list_managed() -> list[Managed]:
    """Every container and service of this toolkit on the engine, services first."""
    import docker

    client = docker_client()
    selector = {"label": f"{labels.MANAGED}=true"}
    found: list[Managed] = []
    with contextlib.suppress(docker.errors.APIError):  # not a swarm manager: no services
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


def remove_managed(names: Iterable[str] = (), *, everything: bool = False) -> list[Managed]:
    """Remove the named containers/services (name or id prefix), or all of them; return those.

    Raises:
        LookupError: A name that matches nothing of this toolkit's (nothing is removed then).
    """
    items = list_managed()
    wanted = list(names)
    if everything:
        chosen = items
    else:
        chosen = [i for i in items if i.name in wanted or any(i.id.startswith(w) for w in wanted)]
        matched = {w for w in wanted for i in chosen if i.name == w or i.id.startswith(w)}
        missing = [w for w in wanted if w not in matched]
        if missing:
            raise LookupError(", ".join(missing))
    client = docker_client()
    for item in chosen:
        with contextlib.suppress(Exception):
            if item.kind == "service":
                client.services.get(item.id).remove()
            else:
                client.containers.get(item.id).remove(force=True)
    return chosen
