"""The Ray cluster the ``ray`` runtime uses: the ``ray`` package (or how to install it), joining a
cluster once per process, and what the cluster says of an actor and of the replicas' own reports.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from openenv_hub.errors import ClusterError, DependencyNotInstalledError
from openenv_hub.support.settings import named_variable

__all__ = ["NAMESPACE", "actor_record", "connect", "ray_module", "replica_infos"]

_Key = TypeVar("_Key")

NAMESPACE = "openenv-hub"

_JOINING = threading.Lock()  # held while this process joins a cluster (see connect)

_CLUSTER_HINT = (
    "Start one on this machine, on loopback: 'RAY_USAGE_STATS_ENABLED=0 ray start --head "
    "--node-ip-address=127.0.0.2 --port=6379 --include-dashboard=false', then pass its "
    "address (--ray 127.0.0.2:6379) or set RAY_ADDRESS."
)


def ray_module() -> Any:
    """The ``ray`` package, or the error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise DependencyNotInstalledError("ray", "ray", feature="The Ray runtime") from None
    return ray


def connect(address: str | None = None) -> str:
    """Join the Ray cluster at ``address`` (``None`` or ``"auto"``: ``$RAY_ADDRESS``) unless
    this process has; return the cluster's address. Safe to call from several threads at
    once: one joins, the others wait for it.

    Raises:
        ClusterError: No address was given, or nothing answers there.
    """
    with _JOINING:
        return _connect(address)


def _connect(address: str | None) -> str:
    ray = ray_module()
    if ray.is_initialized():
        return str(ray.get_runtime_context().gcs_address)
    if not address or address == "auto":
        address = named_variable("RAY_ADDRESS") or ""
    if not address:
        raise ClusterError("No Ray cluster address was given.", hint=_CLUSTER_HINT)
    host, _, port = address.removeprefix("ray://").rpartition(":")
    try:  # ray.init waits minutes for an address where nothing listens: ask first
        socket.create_connection((host, int(port)), timeout=5).close()
    except (OSError, ValueError) as exc:
        raise ClusterError(
            f"No Ray cluster answers at {address} ({exc}).", address=address, hint=_CLUSTER_HINT
        ) from None
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(
        address=address, namespace=NAMESPACE, log_to_driver=False, logging_level=logging.WARNING
    )
    return address


def actor_record(actor_id: str) -> dict[str, Any]:
    """What the cluster's control store says of an actor (state, restarts, pid); ``{}`` if
    it cannot tell."""
    ray = ray_module()
    with contextlib.suppress(Exception):
        record = ray._private.state.actors(actor_id)
        if isinstance(record, dict):
            return record
    return {}


def replica_infos(handles: Mapping[_Key, Any], timeout_s: float) -> dict[_Key, dict[str, Any]]:
    """What each replica says of itself (its ``info()``), for those that answer within
    ``timeout_s``, by the key each handle has in ``handles``."""
    ray = ray_module()
    pending = {handle.info.remote(): key for key, handle in handles.items()}
    ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=timeout_s)
    infos: dict[_Key, dict[str, Any]] = {}
    for ref in ready:
        with contextlib.suppress(Exception):
            infos[pending[ref]] = ray.get(ref, timeout=0)
    return infos
