"""Swarm services: one created from an image with the SDK's specs (replicated mode, one
restart on failure, the image's own health check run every second).

Layer: services.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openenv_hub.docker.engine import sdk_types

if TYPE_CHECKING:
    from openenv_hub.docker.engine import DockerClient, Service

__all__ = ["create_service"]


def create_service(
    client: DockerClient,
    image: str,
    *,
    name: str,
    env: Mapping[str, str],
    labels: Mapping[str, str],
    container_labels: Mapping[str, str],
    replicas: int,
    constraints: list[str],
    image_config: Mapping[str, Any],
    published_port: int | None,
) -> Service:
    """Create the service ``name`` of ``replicas`` tasks of ``image``: on the host network when
    ``published_port`` is None, else on the engine's own with that container port published on
    each node."""
    types = sdk_types()
    options: dict[str, Any] = (
        {"networks": ["host"]}
        if published_port is None
        else {"endpoint_spec": types.EndpointSpec(ports={None: (published_port, "tcp", "host")})}
    )
    return client.services.create(
        image,
        name=name,
        env=[f"{key}={value}" for key, value in env.items()],
        labels=dict(labels),
        container_labels=dict(container_labels),
        mode=types.ServiceMode("replicated", replicas=replicas),
        restart_policy=types.RestartPolicy(condition="on-failure", max_attempts=1),
        constraints=constraints,
        healthcheck=_quick_healthcheck(image_config),
        **options,
    )


def _quick_healthcheck(config: Mapping[str, Any]) -> Any:
    """The image's own HEALTHCHECK, checked every second: a task counts as running only once
    healthy, and images often check every 30 s."""
    test = (config.get("Healthcheck") or {}).get("Test")
    if not test or test[0] == "NONE":
        return None
    second = 1_000_000_000
    return sdk_types().Healthcheck(
        test=test, interval=second, timeout=5 * second, retries=3, start_period=0
    )
