"""Where environment servers run, one registry of runtimes: ``local`` (a child process), ``uv``
(an environment of its own), ``docker`` (a container), ``swarm`` (a Docker Swarm service),
``ray`` (replicas on a Ray cluster), ``kubernetes`` (a Deployment) and ``space`` (a Space's own
app on the Hub).

Each runtime (:class:`Runtime`) starts servers from what it can, a folder, an image or a Space
at a revision, and is found by name (:mod:`openenv_hub.runtimes.registry`): ``from_folder``,
``from_docker_image``, ``from_hub(runtime=...)`` and ``openenv serve --runtime`` all start
through :func:`start`/:func:`starter`. What a runtime starts is a :class:`Provider`: the URLs
of its servers, their logs, and ``stop()``, which runs by itself at interpreter exit and when
the client that owns the provider closes. Everything started outside this process is labelled
(:mod:`openenv_hub.runtimes.labels`) so ``openenv ps`` lists it and ``openenv stop`` removes it.

Adding a runtime is adding a module here that defines it and calls :func:`register`.

Example::

    from openenv_hub.runtimes import runtime_names, start

    runtime_names("folder")  # ['docker', 'kubernetes', 'local', 'ray', 'swarm', 'uv']
    with start("docker", "image", "openenv-echo-env:latest") as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

from openenv_hub.runtimes.base import (
    Provider,
    Runtime,
    RuntimeBase,
    Source,
    SpaceRef,
    StopsOnExit,
)
from openenv_hub.runtimes.registry import (
    get_runtime,
    register,
    runtime_names,
    start,
    starter,
    unregister,
)

__all__ = [
    "Provider",
    "Runtime",
    "RuntimeBase",
    "Source",
    "SpaceRef",
    "StopsOnExit",
    "get_runtime",
    "register",
    "runtime_names",
    "start",
    "starter",
    "unregister",
]
