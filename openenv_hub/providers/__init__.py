"""Deprecated: the runtimes live in :mod:`openenv_hub.runtimes` now.

``openenv_hub.providers`` and its modules (``docker``, ``swarm``, ``ray``, ``uv``, ``local``,
``kubernetes``, ``kubernetes_manifests``, ``labels``, ``inventory``, ``uv_cache``) still import,
with a :class:`DeprecationWarning`, and give the very objects of :mod:`openenv_hub.runtimes`::

    from openenv_hub.providers.docker import DockerProvider  # warns; use:
    from openenv_hub.runtimes.docker import DockerProvider

Layer: runtimes.
"""

from __future__ import annotations

import importlib
from typing import Any

from openenv_hub.runtimes.base import Provider, StopsOnExit
from openenv_hub.support.deprecation import warn_moved

__all__ = [
    "DockerProvider",
    "DockerSwarmProvider",
    "KubernetesProvider",
    "LocalProcessProvider",
    "Provider",
    "RayProvider",
    "StopsOnExit",
    "UvProvider",
]

_CLASSES = {
    "DockerProvider": "docker",
    "DockerSwarmProvider": "swarm",
    "KubernetesProvider": "kubernetes",
    "LocalProcessProvider": "local",
    "RayProvider": "ray",
    "UvProvider": "uv",
}


warn_moved(__name__, "openenv_hub.runtimes", removed_in="0.2")


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        module = importlib.import_module(f"openenv_hub.runtimes.{_CLASSES[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
