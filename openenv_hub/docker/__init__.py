"""The one place that talks to a Docker engine: the engine, image builds, containers.

- :mod:`openenv_hub.docker.engine`: a client of the engine at ``DOCKER_HOST`` (the ``docker``
  SDK, shared per process) and the ``docker`` CLI's check, each saying where it looked when no
  engine answers;
- :mod:`openenv_hub.docker.build`: an environment's image, from a build context staged with
  ``openenv push``'s file selection;
- :mod:`openenv_hub.docker.run`: what an image says of itself, creating a container, and a
  container run for a check (``openenv validate --level docker``);
- :mod:`openenv_hub.docker.services`: a Swarm service of an image;
- :mod:`openenv_hub.docker.labelled`: the containers and services that carry given labels,
  listed and removed (``openenv ps``/``stop``, the reaper).

No module outside this package imports the ``docker`` SDK (``tests/test_docker_sdk_boundary.py``
checks): the SDK's types, errors and specs are named here (:func:`sdk_types`,
:func:`sdk_not_found`, ...).

Runtimes (:mod:`openenv_hub.runtimes`) label, track and stop the containers they start; this
package only talks to the engine. Importing it imports neither the ``docker`` SDK nor the Hub.

Example::

    from openenv_hub.docker import build_image, run_container

    build_image(Path("envs/echo_env"), "echo-env:latest", base_image="python:3.11-slim")
    with run_container("echo-env:latest") as base_url:
        httpx.get(base_url + "/health")

Layer: services.
"""

from __future__ import annotations

from openenv_hub.docker.build import (
    build_context,
    build_image,
    default_tag,
    space_image_tag,
    stage_context,
)
from openenv_hub.docker.engine import (
    docker_client,
    has_bridge_network,
    require_engine,
    sdk_api_error,
    sdk_error,
    sdk_errors,
    sdk_not_found,
    sdk_types,
)
from openenv_hub.docker.run import (
    DEFAULT_PORT,
    Network,
    container_name,
    create_container,
    image_config,
    image_port,
    run_command,
    run_container,
)

__all__ = [
    "DEFAULT_PORT",
    "Network",
    "build_context",
    "build_image",
    "container_name",
    "create_container",
    "default_tag",
    "docker_client",
    "has_bridge_network",
    "image_config",
    "image_port",
    "require_engine",
    "run_command",
    "run_container",
    "sdk_api_error",
    "sdk_error",
    "sdk_errors",
    "sdk_not_found",
    "sdk_types",
    "space_image_tag",
    "stage_context",
]
