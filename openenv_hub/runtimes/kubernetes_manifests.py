"""The Kubernetes objects of an environment deployed from its image: plain dicts, no client.

:func:`kubernetes_objects` gives a Deployment (``replicas`` pods of the image, readiness and
liveness probes on ``/health``, the manifest's resources and variables, locked down: see
below), a Service in front of them, a HorizontalPodAutoscaler when ``max_replicas`` is given, and a Secret for the
manifest's secrets, which the pods read as environment variables. The Secret's values are left
empty unless given: files written to disk never hold a secret, and ``--apply`` sends the
values from the environment through the API.

The pods run as the user the Space images run as (uid and gid 1000, :data:`RUN_AS`; Spaces
require it too) with no way to gain privileges: ``runAsNonRoot``, no privilege escalation, every
capability dropped, the runtime's default seccomp profile, a read-only root file system with
an ``emptyDir`` at ``/tmp`` for what the server writes (temporary files, the web UI's files
and uploads), and no service account token mounted (the server never talks to the Kubernetes
API).

Example:
    >>> objects = kubernetes_objects(Manifest(name="echo_env"), image="echo-env:1", replicas=2)
    >>> [o["kind"] for o in objects]
    ['Deployment', 'Service']

Layer: runtimes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from openenv_hub.errors import ConfigurationError
from openenv_hub.model.manifest import Manifest

__all__ = [
    "DEFAULT_RESOURCES",
    "RUN_AS",
    "WRITABLE_DIR",
    "kubernetes_objects",
    "resource_name",
    "to_yaml",
]

#: Used for what the manifest's ``resources`` leaves out: one server drives about one core.
DEFAULT_RESOURCES = {
    "requests": {"cpu": "500m", "memory": "256Mi"},
    "limits": {"cpu": "1", "memory": "1Gi"},
}
MANAGED_BY = "openenv-hub"
#: The user and group the pods run as: the ``USER 1000`` of the Space Dockerfiles.
RUN_AS = 1000
#: The one writable folder of a pod (an ``emptyDir``); the root file system is read-only.
WRITABLE_DIR = "/tmp"
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
#: An image reference, as Docker and the kubelet parse it: ``[host[:port]/]path[:tag][@digest]``.
_HOST = (
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*)"
)
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_IMAGE = re.compile(
    rf"^(?:{_HOST}(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*"
    r"(?::[\w][\w.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$"
)


def resource_name(name: str) -> str:
    """A Kubernetes object name (DNS-1123 label) for an environment name: ``echo_env`` ->
    ``echo-env``."""
    candidate = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:63].strip("-")
    if not _NAME.match(candidate):
        raise ConfigurationError(
            f"{name!r} cannot be a Kubernetes name; pass --name with lower-case letters, digits "
            "and '-'."
        )
    return candidate


def kubernetes_objects(
    manifest: Manifest,
    *,
    image: str,
    replicas: int = 1,
    name: str | None = None,
    namespace: str = "default",
    max_replicas: int | None = None,
    cpu_target_percent: int = 70,
    secrets: Mapping[str, str] | None = None,
    service_type: str = "ClusterIP",
) -> list[dict[str, Any]]:
    """The Deployment, Service, (HPA) and (Secret) of ``manifest`` served from ``image``.

    Args:
        secrets: Values for the manifest's secret names (missing ones stay empty).
        max_replicas: Scale between ``replicas`` and this many pods on CPU use (an HPA).
    """
    if replicas < 1:
        raise ConfigurationError(f"replicas must be at least 1, not {replicas}.")
    if not _IMAGE.match(image):
        raise ConfigurationError(
            f"{image!r} is not an image reference; pass --image as REGISTRY/NAME:TAG, e.g. "
            "ghcr.io/alice/echo-env:0.1.0 (lower-case name, the image pushed where the "
            "cluster can pull it)."
        )
    if not _NAME.match(namespace):
        raise ConfigurationError(
            f"{namespace!r} cannot be a Kubernetes namespace; pass --namespace with lower-case "
            "letters, digits and '-' (at most 63)."
        )
    if max_replicas is not None and max_replicas < replicas:
        raise ConfigurationError(
            f"--max-replicas ({max_replicas}) must be at least --replicas ({replicas})."
        )
    name = resource_name(name or manifest.name)
    labels = {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "openenv-hub.managed": "true",
    }
    meta = {"name": name, "namespace": namespace, "labels": labels}
    objects = [
        _deployment(manifest, meta, image, replicas),
        _service(meta, service_type),
    ]
    if max_replicas is not None:
        objects.append(_autoscaler(meta, replicas, max_replicas, cpu_target_percent))
    if manifest.secrets:
        values = {key: (secrets or {}).get(key, "") for key in manifest.secrets}
        objects.append(_secret(meta, values))
    return objects


def _service_names(meta: dict[str, Any]) -> list[str]:
    """The names a pod of the cluster reaches the Service by (the server refuses other
    ``Host`` names than addresses and these: :mod:`openenv_hub.server.browsers`)."""
    service = f"{meta['name']}.{meta['namespace']}"
    return [meta["name"], service, f"{service}.svc", f"{service}.svc.cluster.local"]


def _deployment(
    manifest: Manifest, meta: dict[str, Any], image: str, replicas: int
) -> dict[str, Any]:
    port = manifest.port
    env = [{"name": "PORT", "value": str(port)}]
    env += [{"name": key, "value": str(value)} for key, value in manifest.variables.items()]
    if manifest.max_concurrent_envs:
        env.append({"name": "MAX_CONCURRENT_ENVS", "value": str(manifest.max_concurrent_envs)})
    if "OPENENV_ALLOWED_HOSTS" not in manifest.variables:  # the Service's names, in the cluster
        env.append({"name": "OPENENV_ALLOWED_HOSTS", "value": ",".join(_service_names(meta))})
    container: dict[str, Any] = {
        "name": "server",
        "image": image,
        "ports": [{"name": "http", "containerPort": port, "protocol": "TCP"}],
        "env": env,
        "resources": _resources(manifest),
        "readinessProbe": _probe(period_s=5, failures=3),
        "livenessProbe": _probe(period_s=10, failures=6),
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": WRITABLE_DIR}],
    }
    if manifest.secrets:
        container["envFrom"] = [{"secretRef": {"name": f"{meta['name']}-secrets"}}]
    selector = {"app.kubernetes.io/name": meta["name"]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": meta["labels"]},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": _pod_security(),
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def _pod_security() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS,
        "runAsGroup": RUN_AS,
        "fsGroup": RUN_AS,  # owns the emptyDir
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def _probe(*, period_s: int, failures: int) -> dict[str, Any]:
    return {
        "httpGet": {"path": "/health", "port": "http"},
        "initialDelaySeconds": 2,
        "periodSeconds": period_s,
        "timeoutSeconds": 3,
        "failureThreshold": failures,
    }


def _resources(manifest: Manifest) -> dict[str, dict[str, str]]:
    given = manifest.resources.model_dump(exclude_none=True) if manifest.resources else {}
    return {
        kind: {**DEFAULT_RESOURCES[kind], **given.get(kind, {})} for kind in ("requests", "limits")
    }


def _service(meta: dict[str, Any], service_type: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "type": service_type,
            "selector": {"app.kubernetes.io/name": meta["name"]},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
        },
    }


def _autoscaler(
    meta: dict[str, Any], replicas: int, max_replicas: int, cpu_target_percent: int
) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": meta["name"]},
            "minReplicas": replicas,
            "maxReplicas": max_replicas,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": cpu_target_percent},
                    },
                }
            ],
        },
    }


def _secret(meta: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {**meta, "name": f"{meta['name']}-secrets"},
        "type": "Opaque",
        "stringData": values,
    }


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:  # a shared dict is written out each time
        return True


def to_yaml(objects: list[dict[str, Any]]) -> str:
    """The objects as one YAML stream (``kubectl apply -f`` reads it)."""
    return yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False)
