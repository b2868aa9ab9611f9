"""The containers and Swarm services of the ``docker`` and ``swarm`` runtimes (and LocalHub's
Spaces), listed and removed whichever process started them: :class:`EngineInventory`, the
inventory these runtimes name in the registry.

Containers and Swarm services labelled ``openenv-hub.managed=true`` (see :mod:`.labels`) are
this toolkit's; ``owner_alive`` tells whether the process that started one still runs (a
container whose owner is gone was left behind by a crash, unless its reaper got to it first).
What lists every runtime's servers at once is :mod:`openenv_hub.runtimes.everywhere`.

Example:
    >>> for item in EngineInventory().running():  # doctest: +SKIP
    ...     print(item.name, item.runtime, item.url, item.status)

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence

import openenv_hub.runtimes.labels as labels
from openenv_hub.runtimes.base import Running

__all__ = ["EngineInventory", "Managed", "list_managed", "managed", "remove_managed"]

#: The former name of :class:`~openenv_hub.runtimes.base.Running`.
Managed = Running


def managed(kind: str, id_: str, name: str, status: str, tags: dict[str, str]) -> Running:
    """What ``openenv ps`` shows of an object labelled as :mod:`.labels` says."""
    pid = tags.get(labels.OWNER_PID, "")
    return Running(
        kind=kind,
        id=id_[:12],
        name=name,
        runtime=tags.get(labels.RUNTIME, "?"),
        status=status,
        url=tags.get(labels.URL, ""),
        source=tags.get(labels.SOURCE, ""),
        owner_pid=int(pid) if pid.isdigit() else None,
    )


class EngineInventory:
    """The labelled containers and services on the engine at ``DOCKER_HOST`` (services first)."""

    lists = "containers and Swarm services"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return True

    def running(self, *, address: str | None = None) -> list[Running]:
        """Raises: DependencyNotInstalledError (no ``docker`` package), DockerError (no engine)."""
        from openenv_hub.docker.labelled import labelled_objects

        return [
            managed(found.kind, found.id, found.name, found.status, dict(found.labels))
            for found in labelled_objects({labels.MANAGED: "true"})
        ]

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        from openenv_hub.docker.labelled import remove_object

        for item in items:
            with contextlib.suppress(Exception):  # gone already, or the engine refused: listed
                remove_object(item.kind, item.id)


def list_managed(*, ray_address: str | None = None) -> list[Running]:
    """What plain ``openenv ps`` lists (and the Ray cluster at ``ray_address``); see
    :func:`openenv_hub.runtimes.everywhere.list_running`, which says what could not be asked."""
    from openenv_hub.runtimes.everywhere import list_running

    return list_running(also=["ray"] if ray_address else [], address=ray_address).items


def remove_managed(
    names: Iterable[str] = (), *, everything: bool = False, ray_address: str | None = None
) -> list[Running]:
    """Stop what :func:`list_managed` lists by name or id prefix (or all of it); return that.

    Raises:
        LookupError: A name that matches nothing listed (nothing is stopped then).
    """
    from openenv_hub.runtimes.everywhere import remove_running

    also = ["ray"] if ray_address else []
    return remove_running(names, everything=everything, also=also, address=ray_address)[0]
