"""The Deployments of the ``kubernetes`` runtime and ``openenv deploy`` (labelled
``openenv-hub.managed=true``) on the cluster of your kubeconfig, in every namespace: listed and
deleted with the objects applied with them (Service, HorizontalPodAutoscaler, Secret of the
same name). Asked when named: ``openenv ps --runtime kubernetes``.

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from openenv_hub.runtimes.base import Running
from openenv_hub.runtimes.kubernetes import api_client, kubernetes_module

__all__ = ["DeploymentInventory"]

_SELECTOR = "openenv-hub.managed=true"


class DeploymentInventory:
    """The labelled Deployments of the cluster (``address``: a kubeconfig file to read)."""

    lists = "Kubernetes Deployments"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return False

    def running(self, *, address: str | None = None) -> list[Running]:
        """Raises: DependencyNotInstalledError, ClusterError (no kubeconfig)."""
        apps = kubernetes_module().client.AppsV1Api(api_client(address))
        found = apps.list_deployment_for_all_namespaces(label_selector=_SELECTOR).items
        return [_running(deployment) for deployment in found]

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        client = kubernetes_module().client
        api = api_client(address)
        for item in items:
            namespace, _, name = item.id.partition("/")
            for kind_api, verb in (
                (client.AppsV1Api, "delete_namespaced_deployment"),
                (client.CoreV1Api, "delete_namespaced_service"),
                (client.AutoscalingV2Api, "delete_namespaced_horizontal_pod_autoscaler"),
                (client.CoreV1Api, "delete_namespaced_secret"),
            ):
                with contextlib.suppress(Exception):  # not applied with it, or gone already
                    getattr(kind_api(api), verb)(name, namespace)


def _running(deployment: Any) -> Running:
    meta = deployment.metadata
    ready = deployment.status.ready_replicas or 0
    return Running(
        kind="deployment",
        id=f"{meta.namespace}/{meta.name}",
        name=str(meta.name),
        runtime="kubernetes",
        status=f"{ready}/{deployment.spec.replicas} ready",
        url="",
        source=str(deployment.spec.template.spec.containers[0].image),
        owner_pid=None,
    )
