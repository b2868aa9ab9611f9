"""Where environment servers run: a local process, uv, a Docker container, a swarm, a Ray
cluster, Kubernetes, a Space.

What a runtime starts is a :class:`Provider` (see :mod:`openenv_hub.runtimes.base`): the URLs of
its servers, their logs, and ``stop()``, which runs by itself at interpreter exit and when the
client that owns the provider closes. Everything started outside this process is labelled
(:mod:`openenv_hub.runtimes.labels`) so ``openenv ps`` lists it and ``openenv stop`` removes it.

Example::

    from openenv_hub.runtimes.docker import DockerProvider

    with DockerProvider.start("openenv-echo-env:latest") as server:
        httpx.get(server.base_url + "/health")
"""

from __future__ import annotations

from openenv_hub.runtimes.base import Provider, StopsOnExit

__all__ = ["Provider", "StopsOnExit"]
