"""Where environment servers run, one registry of runtimes: ``local`` (a child process), ``uv``
(an environment of its own), ``docker`` (a container), ``swarm`` (a Docker Swarm service),
``ray`` (replicas on a Ray cluster), ``kubernetes`` (a Deployment) and ``space`` (a Space's own
app on the Hub).

Each runtime (:class:`Runtime`) starts servers from what it can, a folder, an image or a Space
at a revision, and is found by name (:mod:`openenv_hub.runtimes.registry`): ``from_folder``,
``from_docker_image``, ``from_hub(runtime=...)`` and ``openenv serve --runtime`` all start
through :func:`start`/:func:`starter`. What a runtime starts is a :class:`Provider`: the URLs
of its servers, their logs, and ``stop()``, which runs by itself at interpreter exit and when
the client that owns the provider closes. Each runtime names its inventory (:func:`inventory_of`),
which lists and stops what it started from any process: ``openenv ps`` and ``openenv stop`` ask
them all (:mod:`openenv_hub.runtimes.everywhere`). What runs outside this process is labelled
(:mod:`openenv_hub.runtimes.labels`) or recorded (:mod:`openenv_hub.runtimes.processes`).

Adding a runtime is adding a module here that defines it (and its inventory), and a line of
:data:`~openenv_hub.runtimes.registry.BUILTIN_RUNTIMES`.

Example::

    from openenv_hub.runtimes import runtime_names, start

    runtime_names("folder")  # ['docker', 'kubernetes', 'local', 'ray', 'swarm', 'uv']
    with start("docker", "image", "openenv-echo-env:latest") as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

from openenv_hub.runtimes.base import (
    Inventory,
    Provider,
    ReplicaStatus,
    Running,
    Runtime,
    RuntimeBase,
    Source,
    SpaceRef,
    StopsOnExit,
)
from openenv_hub.runtimes.registry import (
    get_runtime,
    inventory_of,
    register,
    runtime_names,
    start,
    starter,
    unregister,
)

__all__ = [
    "Inventory",
    "Provider",
    "ReplicaStatus",
    "Running",
    "Runtime",
    "RuntimeBase",
    "Source",
    "SpaceRef",
    "StopsOnExit",
    "get_runtime",
    "inventory_of",
    "register",
    "runtime_names",
    "start",
    "starter",
    "unregister",
]
