"""``openenv deploy kubernetes ENV --image IMAGE --replicas N``: write the Kubernetes manifests
of an environment (Deployment, Service, optional HPA, Secret), and with ``--apply`` apply them
through the official client and wait for the pods."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub.model.manifest import load_manifest
from openenv_hub_cli._utils import CommandError, EnvPathArg, console, resolve_env_dir

__all__ = ["app"]

app = typer.Typer(help="Deploy an environment's image to a cluster.", no_args_is_help=True)

_FILES = {
    "Deployment": "deployment.yaml",
    "Service": "service.yaml",
    "HorizontalPodAutoscaler": "hpa.yaml",
    "Secret": "secret.yaml",
}


@app.command("kubernetes")
def kubernetes(
    *,
    path: EnvPathArg = Path("."),
    image: Annotated[str, typer.Option("--image", "-i", help="The image the pods run (pushed).")],
    replicas: Annotated[int, typer.Option("--replicas", min=1, help="Pods to run.")] = 1,
    max_replicas: Annotated[
        int | None,
        typer.Option(
            "--max-replicas", min=1, help="Add an autoscaler: up to this many pods on CPU use."
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="Object name.", show_default="ENV")
    ] = None,
    namespace: Annotated[
        str, typer.Option("--namespace", help="Kubernetes namespace.")
    ] = "default",
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Folder for the manifests.", show_default="k8s/NAME"),
    ] = None,
    secret: Annotated[
        list[str] | None,
        typer.Option(
            "--secret",
            help="A secret's name, repeatable; --apply sends $NAME (and only the names given here).",
        ),
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Apply to the cluster and wait for pods.")
    ] = False,
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            "--kubeconfig", help="Cluster config.", show_default="$KUBECONFIG or ~/.kube/config"
        ),
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for ready pods.")
    ] = 300.0,
) -> None:
    """Write (and with --apply, apply) a Deployment, Service, HPA and Secret for ENV."""
    from openenv_hub.runtimes.kubernetes_manifests import kubernetes_objects, to_yaml

    if secret is None:
        secret = []
    env_dir = resolve_env_dir(path)
    manifest = load_manifest(env_dir)
    names = list(dict.fromkeys([*manifest.secrets, *secret]))
    manifest = manifest.model_copy(update={"secrets": names})

    def objects_with(values: dict[str, str] | None = None) -> list[dict[str, Any]]:
        return kubernetes_objects(
            manifest,
            image=image,
            replicas=replicas,
            name=name,
            namespace=namespace,
            max_replicas=max_replicas,
            secrets=values,
        )

    objects = objects_with()
    folder = out or Path("k8s") / objects[0]["metadata"]["name"]
    folder.mkdir(parents=True, exist_ok=True)
    for stale in set(_FILES.values()) - {_FILES[body["kind"]] for body in objects}:
        (folder / stale).unlink(missing_ok=True)  # from an earlier run with other options
    for body in objects:  # written without secret values
        (folder / _FILES[body["kind"]]).write_text(to_yaml([body]), encoding="utf-8")
        console.print(f"Wrote {folder / _FILES[body['kind']]} ({body['kind']})")
    if names:
        console.print(
            f"{folder / 'secret.yaml'} lists {', '.join(names)} with empty values: fill them in, "
            "or name each with --secret NAME and use --apply, which sends $NAME."
        )
    unsent = [key for key in names if key not in secret]
    if apply and unsent:
        console.print(
            f"--apply leaves {', '.join(unsent)} empty: the manifest asks for them, and the code "
            "it runs would read them, so only the names given with --secret are sent."
        )
    if apply:
        options = {"image": image, "replicas": replicas, "name": name, "namespace": namespace}
        options |= {"max_replicas": max_replicas, "secrets": secret_values(secret)}
        options |= {"secret_names": names, "kubeconfig": kubeconfig, "startup_timeout_s": timeout_s}
        _apply(env_dir, options)


def secret_values(named: list[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values ``--apply`` sends: those of the secrets named with ``--secret``, from the
    environment, and never one that a manifest alone asks for (its author wrote the code that
    reads them), a Hugging Face token included."""
    env = os.environ if environ is None else environ
    names = list(dict.fromkeys(named))
    missing = [key for key in names if key not in env]
    if missing:
        raise CommandError(
            f"--apply sends each secret from your environment, and {', '.join(missing)} "
            "is not set.",
            hint="Export it first (e.g. read -s NAME; export NAME), then run the command again.",
        )
    return {key: env[key] for key in names}


def _apply(env_dir: Path, options: dict[str, Any]) -> None:
    """Deploy the folder with the registry's ``kubernetes`` runtime, and leave it running."""
    from openenv_hub.runtimes import cleanup, start

    deployment = start("kubernetes", "folder", env_dir, **options)
    cleanup.untrack(deployment)  # the deployment outlives this command
    console.print("Applied; ready pods:")
    for url in deployment.base_urls:
        console.print(f"  {url}")
    for line in deployment.details():
        console.print(line, markup=False, highlight=False)
