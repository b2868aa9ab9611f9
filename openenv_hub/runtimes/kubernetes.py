"""The ``kubernetes`` runtime: an environment deployed on Kubernetes through the official
``kubernetes`` client, from an image in a registry the cluster pulls from.

:class:`KubernetesProvider` applies the objects of
:mod:`openenv_hub.runtimes.kubernetes_manifests` (creating each, or patching it when it
exists), waits until the Deployment's pods are ready (their readiness probe is ``/health``),
gives the pods' URLs (``base_urls``, reachable from inside the cluster's network) and the
Service's (``service_url``), and deletes everything on ``stop()``.

The cluster comes from a kubeconfig (``kubeconfig=``, else ``$KUBECONFIG``, else
``~/.kube/config``), or from the pod's service account when it runs inside a cluster. Without
one, :class:`~openenv_hub.errors.ClusterError` names the file it looked for.

Example::

    objects = kubernetes_objects(load_manifest("envs/echo_env"), image="REGISTRY/echo-env:1", replicas=2)
    with KubernetesProvider.start(objects) as deployment:
        print(deployment.base_urls)

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

import openenv_hub.runtimes.cleanup as cleanup
from openenv_hub.errors import (
    ClusterError,
    ConfigurationError,
    DependencyNotInstalledError,
    ServerStartError,
)
from openenv_hub.model.manifest import Manifest, load_manifest
from openenv_hub.runtimes.base import RuntimeBase, StopsOnExit
from openenv_hub.runtimes.kubernetes_manifests import kubernetes_objects
from openenv_hub.support.progress import SHORT_WAIT_S, report_progress
from openenv_hub.support.settings import named_variable

__all__ = [
    "KubernetesProvider",
    "KubernetesRuntime",
    "api_client",
    "kubeconfig_path",
    "kubernetes_module",
]

# kind -> (API class of the client, the name in its create_/patch_/delete_namespaced_ methods)
_APIS = {
    "Deployment": ("AppsV1Api", "deployment"),
    "Service": ("CoreV1Api", "service"),
    "Secret": ("CoreV1Api", "secret"),
    "HorizontalPodAutoscaler": ("AutoscalingV2Api", "horizontal_pod_autoscaler"),
}


def kubernetes_module() -> Any:
    """The ``kubernetes`` package, or the error that says how to install it."""
    try:
        import kubernetes
    except ImportError:
        raise DependencyNotInstalledError(
            "kubernetes", "kubernetes", feature="Deploying to Kubernetes"
        ) from None
    return kubernetes


def kubeconfig_path(kubeconfig: str | Path | None = None) -> Path:
    """The kubeconfig to read: the one given, else the first of ``$KUBECONFIG``, else
    ``~/.kube/config``."""
    if kubeconfig:
        return Path(kubeconfig).expanduser()
    listed = named_variable("KUBECONFIG")
    if listed:
        return Path(listed.split(os.pathsep)[0]).expanduser()
    return Path("~/.kube/config").expanduser()


def api_client(kubeconfig: str | Path | None = None) -> Any:
    """A client of the cluster in the kubeconfig (or of the cluster this pod runs in).

    Raises:
        ClusterError: No kubeconfig where it looked (the message names the file), or one that
            cannot be used.
    """
    k8s = kubernetes_module()
    path = kubeconfig_path(kubeconfig)
    configuration = k8s.client.Configuration()
    if not path.is_file():
        if kubeconfig is None and named_variable("KUBERNETES_SERVICE_HOST"):
            k8s.config.load_incluster_config(client_configuration=configuration)
            return k8s.client.ApiClient(configuration)
        given = (
            "--kubeconfig"
            if kubeconfig
            else ("$KUBECONFIG" if named_variable("KUBECONFIG") else "the default")
        )
        raise ClusterError(
            f"No Kubernetes cluster to apply to: there is no kubeconfig at {path} ({given}), "
            "and this is not a pod inside a cluster.",
            address=str(path),
            hint="Point KUBECONFIG at your cluster's kubeconfig (or pass --kubeconfig), or drop "
            "--apply to only write the manifests.",
        )
    try:
        k8s.config.load_kube_config(config_file=str(path), client_configuration=configuration)
    except Exception as exc:
        raise ClusterError(
            f"The kubeconfig at {path} cannot be used: {exc}",
            address=str(path),
            hint="Check its current context ('kubectl config current-context').",
        ) from None
    return k8s.client.ApiClient(configuration)


class KubernetesProvider(StopsOnExit):
    """A Deployment (and its Service, HPA, Secret) applied to a cluster; see the module."""

    runtime = "kubernetes"

    def __init__(self, api: Any, objects: list[dict[str, Any]]) -> None:
        self._api = api
        self.objects = objects
        deployment = next(o for o in objects if o["kind"] == "Deployment")
        self.name = str(deployment["metadata"]["name"])
        self.namespace = str(deployment["metadata"].get("namespace", "default"))
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        self.port = int(container["ports"][0]["containerPort"])
        self.wanted_replicas = int(deployment["spec"]["replicas"])
        self._urls: list[str] = []
        self._stopped = False

    @classmethod
    def start(
        cls,
        objects: list[dict[str, Any]],
        *,
        kubeconfig: str | Path | None = None,
        timeout_s: float = 300.0,
    ) -> KubernetesProvider:
        """Apply ``objects`` and return once the Deployment's pods are ready.

        Raises:
            ClusterError: No cluster configured.
            ServerStartError: The pods were not ready in time (with their logs).
        """
        provider = cls(api_client(kubeconfig), objects)
        provider.apply()
        cleanup.track(provider)
        provider.wait_ready(timeout_s=timeout_s)
        return provider

    def _call(self, kind: str, verb: str, *args: Any) -> Any:
        api_class, suffix = _APIS[kind]
        api = getattr(kubernetes_module().client, api_class)(self._api)
        return getattr(api, f"{verb}_namespaced_{suffix}")(*args)

    def apply(self) -> None:
        """Create each object, or patch it where it exists already.

        Raises:
            ClusterError: The API server did not answer, or refused an object.
        """
        import urllib3

        errors = kubernetes_module().client.exceptions
        host = str(self._api.configuration.host)
        for body in self.objects:
            name = body["metadata"]["name"]
            try:
                try:
                    self._call(body["kind"], "create", self.namespace, body)
                except errors.ApiException as exc:
                    if exc.status != 409:
                        raise
                    self._call(body["kind"], "patch", name, self.namespace, body)
            except urllib3.exceptions.HTTPError as exc:
                raise ClusterError(
                    f"The Kubernetes API at {host} did not answer: {exc}",
                    address=host,
                    hint="Is the cluster running, and is it the current context of the kubeconfig?",
                ) from None
            except errors.ApiException as exc:
                raise ClusterError(
                    f"The Kubernetes API at {host} refused the {body['kind']} {name}: "
                    f"{exc.status} {exc.reason}",
                    address=host,
                    hint="Check your permissions in the namespace, and the object's message above.",
                ) from None

    def _pods(self) -> list[Any]:
        core = kubernetes_module().client.CoreV1Api(self._api)
        selector = f"app.kubernetes.io/name={self.name}"
        return list(core.list_namespaced_pod(self.namespace, label_selector=selector).items)

    def wait_ready(self, *, timeout_s: float = 300.0) -> list[str]:
        """Wait until ``replicas`` pods are ready; return their URLs."""
        deadline = time.monotonic() + timeout_s
        with report_progress(
            f"Kubernetes deployment {self.name}",
            f"waiting for {self.wanted_replicas} pods",
            show_after_s=SHORT_WAIT_S,
        ) as progress:
            while True:
                ready = [pod for pod in self._pods() if _ready(pod)]
                progress.stage(f"{len(ready)} of {self.wanted_replicas} pods ready")
                if len(ready) >= self.wanted_replicas:
                    self._urls = [f"http://{pod.status.pod_ip}:{self.port}" for pod in ready]
                    return list(self._urls)
                if time.monotonic() > deadline:
                    raise ServerStartError(
                        f"{len(ready)} of {self.wanted_replicas} pods of {self.name} are ready after "
                        f"{timeout_s:g} s.",
                        runtime=self.runtime,
                        logs=self.logs(40),
                        hint=f"'kubectl describe deployment {self.name} -n {self.namespace}' "
                        "says why.",
                    )
                time.sleep(1.0)

    @property
    def base_urls(self) -> list[str]:
        return list(self._urls)

    @property
    def base_url(self) -> str:
        if not self._urls:
            raise ServerStartError("No pod is ready.", runtime=self.runtime)
        return self._urls[0]

    @property
    def service_url(self) -> str:
        return f"http://{self.name}.{self.namespace}.svc.cluster.local"

    def details(self) -> list[str]:
        return [
            f"Service  {self.service_url}  (namespace {self.namespace})",
            f"Name  {self.name}  (openenv ps --runtime kubernetes lists it; "
            f"openenv stop --runtime kubernetes {self.name})",
        ]

    def logs(self, tail_lines: int = 200) -> str:
        core = kubernetes_module().client.CoreV1Api(self._api)
        lines: list[str] = []
        with contextlib.suppress(Exception):
            for pod in self._pods():
                text = core.read_namespaced_pod_log(
                    pod.metadata.name, self.namespace, tail_lines=tail_lines
                )
                lines += [f"[{pod.metadata.name}] {line}" for line in str(text).splitlines()]
        return "\n".join(lines[-tail_lines:])

    def stop(self) -> None:
        """Delete every object applied (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        cleanup.untrack(self)
        for body in reversed(self.objects):
            with contextlib.suppress(Exception):
                self._call(body["kind"], "delete", body["metadata"]["name"], self.namespace)
        self._urls = []


def _ready(pod: Any) -> bool:
    conditions = pod.status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


#: What applying takes, besides the objects' own options (:func:`kubernetes_objects`).
DEPLOY_OPTIONS = frozenset(
    {"replicas", "name", "namespace", "max_replicas", "secrets", "service_type", "kubeconfig",
     "startup_timeout_s"}
)  # fmt: skip


class KubernetesRuntime(RuntimeBase):
    """A Deployment of an image (an environment folder's manifest describing it, when given)."""

    name = "kubernetes"
    summary = "a Deployment on the cluster of your kubeconfig (image= pushed to a registry)"
    inventory = "openenv_hub.runtimes.kubernetes_inventory:DeploymentInventory"
    options = {"image": DEPLOY_OPTIONS, "folder": DEPLOY_OPTIONS | {"image", "secret_names"}}

    def start_image(self, image: str, **options: Any) -> KubernetesProvider:
        name = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
        identifier = "".join(c if c.isalnum() else "_" for c in name).strip("_") or "env"
        name = identifier if identifier[0].isalpha() else f"env_{identifier}"
        manifest = Manifest.model_validate({"name": name})
        return _deploy(manifest, image, **options)

    def start_folder(self, path: Path, **options: Any) -> KubernetesProvider:
        image = options.pop("image", None)
        if not image:
            raise ConfigurationError(
                "The kubernetes runtime runs an image the cluster pulls: pass "
                "image='REGISTRY/NAME:TAG' (openenv build makes it; docker push puts it there)."
            )
        manifest = load_manifest(path)
        more = [key for key in options.pop("secret_names", ()) if key not in manifest.secrets]
        if more:  # secrets the pods read besides the manifest's (openenv deploy --secret)
            manifest = manifest.model_copy(update={"secrets": [*manifest.secrets, *more]})
        return _deploy(manifest, image, **options)


def _deploy(
    manifest: Manifest,
    image: str,
    *,
    kubeconfig: str | Path | None = None,
    startup_timeout_s: float = 300.0,
    **objects: Any,
) -> KubernetesProvider:
    deployed = kubernetes_objects(manifest, image=image, **objects)
    return KubernetesProvider.start(deployed, kubeconfig=kubeconfig, timeout_s=startup_timeout_s)
