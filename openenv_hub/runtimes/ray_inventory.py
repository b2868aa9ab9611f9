"""The Ray replicas behind ``openenv ps`` and ``openenv stop``: the named actors of the
``openenv-hub`` namespace on a cluster, whichever process started them.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
from collections.abc import Iterable, Sequence

import openenv_hub.runtimes.labels as labels
from openenv_hub.errors import OpenEnvError
from openenv_hub.runtimes.base import Running
from openenv_hub.runtimes.inventory import managed
from openenv_hub.runtimes.ray import replica_names
from openenv_hub.runtimes.ray_cluster import (
    NAMESPACE,
    actor_record,
    connect,
    ray_module,
    replica_infos,
)
from openenv_hub.support.settings import named_variable

__all__ = ["ReplicaInventory", "list_replicas", "remove_replicas"]


def list_replicas(
    address: str | None = None, *, timeout_s: float = 5.0
) -> list[tuple[str, str, str, dict[str, str]]]:
    """``(actor id, name, status, labels)`` of every replica on the cluster at ``address``."""
    connect(address)
    ray = ray_module()
    handles = {name: ray.get_actor(name, namespace=NAMESPACE) for name in replica_names()}
    infos = replica_infos(handles, timeout_s)
    rows = []
    for name, handle in handles.items():
        actor_id = handle._actor_id.hex()
        record = actor_record(actor_id)
        info = infos.get(name, {})
        state = str(record.get("State", "ALIVE" if info else "UNKNOWN"))
        restarts = int(record.get("NumRestarts", 0))
        status = state + (f", {restarts} restart{'s' * (restarts != 1)}" if restarts else "")
        tags = {
            labels.RUNTIME: "ray",
            labels.URL: str(info.get("url", "")),
            labels.SOURCE: str(info.get("source", "")),
            labels.OWNER_PID: str(info.get("owner_pid", "")),
        }
        rows.append((actor_id, name, status, tags))
    return rows


#: How long the cluster may go on listing a replica after it was killed.
GONE_WITHIN_S = 30.0


def remove_replicas(names: Iterable[str], *, within_s: float = GONE_WITHIN_S) -> None:
    """Kill the named replicas for good (Ray does not restart them), and return once the
    cluster no longer lists them: ``ray.kill`` returns before the actor is gone, so a replica
    said to be removed could otherwise still be listed (and reached) for a moment.

    Raises:
        OpenEnvError: The cluster still lists some of them ``within_s`` after they were killed.
    """
    ray = ray_module()
    wanted = set(names)
    for name in wanted:
        with contextlib.suppress(Exception):
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=True)
    deadline = time.monotonic() + within_s
    while left := wanted.intersection(replica_names()):
        if time.monotonic() >= deadline:
            raise OpenEnvError(
                f"The Ray cluster still lists {', '.join(sorted(left))} {within_s:g} s after "
                "they were killed.",
                hint="See `ray list actors` on the cluster, then run the same `openenv stop` again.",
            )
        time.sleep(0.1)


class ReplicaInventory:
    """The replicas of the ``ray`` runtime on the cluster at ``address`` (or ``$RAY_ADDRESS``, or
    the one this process joined); asked by plain ``openenv ps`` when a cluster is known and the
    ``ray`` package is installed."""

    lists = "Ray replicas"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        if address:
            return True
        if "ray" in sys.modules and sys.modules["ray"].is_initialized():
            return True
        return bool(named_variable("RAY_ADDRESS")) and importlib.util.find_spec("ray") is not None

    def running(self, *, address: str | None = None) -> list[Running]:
        return [managed("actor", *row) for row in list_replicas(address)]

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        remove_replicas(item.name for item in items)
