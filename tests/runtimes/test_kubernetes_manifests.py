"""``openenv deploy kubernetes``: the manifests for echo validate against Kubernetes' own OpenAPI
schemas (kubernetes-validate, strict), carry probes, resources, variables and a Secret without
values; ``--apply`` without a cluster names the kubeconfig it looked for."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from ray_support import require_extra

from openenv_hub.errors import ClusterError, ConfigurationError
from openenv_hub.model.manifest import Manifest, load_manifest
from openenv_hub.runtimes.kubernetes_manifests import kubernetes_objects, to_yaml

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"


def _validate(body: dict[str, Any]) -> None:
    require_extra("kubernetes_validate")
    import kubernetes_validate

    kubernetes_validate.validate(body, kubernetes_validate.latest_version(), strict=True)


def _echo_with_everything() -> Any:
    """Echo's manifest with resources, variables and a secret, as an environment may have."""
    fields = load_manifest(ECHO_ENV).model_dump(exclude_defaults=True)
    return Manifest.model_validate(
        {
            **fields,
            "variables": {"LOG_LEVEL": "debug", "MAX_STEPS": 10},
            "secrets": ["API_KEY"],
            "max_concurrent_envs": 32,
            "resources": {"requests": {"cpu": "250m", "memory": "128Mi"}, "limits": {"cpu": "2"}},
        }
    )


def test_echo_manifests_validate_against_the_kubernetes_schema() -> None:
    objects = kubernetes_objects(
        load_manifest(ECHO_ENV), image="registry.example/echo-env:0.1.0", replicas=2
    )
    assert [o["kind"] for o in objects] == ["Deployment", "Service"]
    for body in objects:
        _validate(body)
    for body in yaml.safe_load_all(to_yaml(objects)):  # what the files hold, read back
        _validate(body)


def test_every_object_validates_and_carries_the_manifest() -> None:
    manifest = _echo_with_everything()
    objects = kubernetes_objects(
        manifest, image="echo-env:1", replicas=2, max_replicas=6, namespace="rl"
    )
    kinds = {o["kind"]: o for o in objects}
    assert set(kinds) == {"Deployment", "Service", "HorizontalPodAutoscaler", "Secret"}
    for body in objects:
        _validate(body)
        assert body["metadata"]["namespace"] == "rl" and body["metadata"]["name"].startswith(
            "echo-env"
        )
    container = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert container["livenessProbe"]["httpGet"]["path"] == "/health"
    assert container["resources"] == {
        "requests": {"cpu": "250m", "memory": "128Mi"},
        "limits": {"cpu": "2", "memory": "1Gi"},
    }
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env == {
        "PORT": "8000",
        "LOG_LEVEL": "debug",
        "MAX_STEPS": "10",
        "MAX_CONCURRENT_ENVS": "32",
        "OPENENV_ALLOWED_HOSTS": "echo-env,echo-env.rl,echo-env.rl.svc,echo-env.rl.svc.cluster.local",
    }
    assert container["envFrom"] == [{"secretRef": {"name": "echo-env-secrets"}}]
    assert kinds["Secret"]["stringData"] == {"API_KEY": ""}  # values only when applying
    hpa = kinds["HorizontalPodAutoscaler"]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 6)
    with_value = kubernetes_objects(manifest, image="i", secrets={"API_KEY": "s3cret"})
    assert with_value[-1]["stringData"] == {"API_KEY": "s3cret"}


def test_a_pod_answers_its_services_names_and_no_other(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the cluster, clients reach the server by its Service's names (``service_url``), which
    it must answer; a name rebound to its address (DNS rebinding) it still refuses."""
    from echo_env.server.environment import EchoEnvironment

    from openenv_hub import create_app

    (deployment, _service) = kubernetes_objects(load_manifest(ECHO_ENV), image="echo-env:1")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    for variable in container["env"]:
        monkeypatch.setenv(variable["name"], variable["value"])
    server = serve(create_app(EchoEnvironment))
    for host in ("echo-env", "echo-env.default.svc.cluster.local", "10.12.0.7:8000"):
        assert httpx.get(f"{server.url}/health", headers={"host": host}).status_code == 200
    assert httpx.get(f"{server.url}/health", headers={"host": "rebound.test"}).status_code == 403


def test_pods_run_as_user_1000_locked_down_with_a_writable_tmp_only() -> None:
    """A pod that runs as root, may gain privileges, keeps capabilities, writes anywhere on its
    file system or holds a service account token gives an escape from the environment's code
    (or a compromised dependency) a long way to go."""
    (deployment, _service) = kubernetes_objects(load_manifest(ECHO_ENV), image="echo-env:1")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 1000,
        "runAsGroup": 1000,
        "fsGroup": 1000,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert container["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert pod["volumes"] == [{"name": "tmp", "emptyDir": {}}]
    _validate(deployment)


def _as_docker_options(deployment: dict[str, Any]) -> list[str]:
    """``docker run`` options that confine a container as the pod's security context does."""
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    user, confined = pod["securityContext"], container["securityContext"]
    options = ["--user", f"{user['runAsUser']}:{user['runAsGroup']}"]
    options += ["--read-only"] if confined["readOnlyRootFilesystem"] else []
    for capability in confined["capabilities"]["drop"]:
        options += ["--cap-drop", capability]
    if not confined["allowPrivilegeEscalation"]:
        options += ["--security-opt", "no-new-privileges"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    for mount in container["volumeMounts"]:
        assert volumes[mount["name"]] == {"name": mount["name"], "emptyDir": {}}
        options += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777"]
    for variable in container["env"]:
        options += ["-e", f"{variable['name']}={variable['value']}"]
    return options


@pytest.mark.docker
@pytest.mark.slow
def test_the_image_serves_under_the_pods_security_context(echo_image: str) -> None:
    """The lock-down must not stop the server: its image, run with the same confinement (as the
    image's own numeric user, read-only, no capabilities, /tmp the only writable folder), serves
    sessions."""
    from docker_support.engine import docker, wait_http
    from echo_env import EchoEnv

    from openenv_hub.transport.local_ports import free_port

    assert docker("image", "inspect", "-f", "{{.Config.User}}", echo_image).stdout.strip() == "1000"
    port = free_port()
    (deployment, _service) = kubernetes_objects(load_manifest(ECHO_ENV), image=echo_image)
    options = [*_as_docker_options(deployment), "-e", f"PORT={port}"]
    container = docker("run", "-d", "--network", "host", *options, echo_image).stdout.strip()
    try:
        wait_http(f"http://127.0.0.1:{port}/health", timeout_s=60)
        with EchoEnv(base_url=f"http://127.0.0.1:{port}").sync() as env:
            env.reset()
            assert env.call_tool("echo_message", message="locked") == "locked"
        assert docker("exec", container, "id", "-u").stdout.strip() == "1000"
        denied = docker("exec", container, "touch", "/home/user/app/x", check=False)
        assert denied.returncode != 0 and "Read-only file system" in denied.stderr
        assert docker("exec", container, "touch", "/tmp/x", check=False).returncode == 0
    finally:
        docker("rm", "-f", container, check=False)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"replicas": 3, "max_replicas": 2}, "at least --replicas"),
        ({"name": "!!!"}, "cannot be a Kubernetes name"),
        ({"replicas": 0}, "at least 1"),
        ({"image": "Echo Env:1"}, "'Echo Env:1' is not an image reference"),
        ({"image": "ghcr.io/alice/echo:"}, "not an image reference"),
        ({"namespace": "My_Team"}, "'My_Team' cannot be a Kubernetes namespace"),
    ],
)
def test_bad_options_are_explained(options: dict[str, Any], message: str) -> None:
    options = {"image": "i", **options}
    with pytest.raises(ConfigurationError, match=message):
        kubernetes_objects(load_manifest(ECHO_ENV), **options)


@pytest.mark.parametrize(
    "image",
    [
        "echo-env",
        "echo_env:0.1.0",
        "alice/echo-env:latest",
        "ghcr.io/alice/echo-env:0.1.0",
        "localhost:5000/team/echo__env:v1.2-rc.1",
        f"registry.example.com/echo@sha256:{'a' * 64}",
    ],
)
def test_image_references_that_a_cluster_can_pull_are_accepted(image: str) -> None:
    (deployment, _service) = kubernetes_objects(load_manifest(ECHO_ENV), image=image)
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == image


def test_a_bad_image_is_refused_before_anything_is_written(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    result = cli("deploy", "kubernetes", ECHO_ENV, "--image", "bad image!", "--out", out)
    assert result.code == 1 and "'bad image!' is not an image reference" in result.text
    assert "Traceback" not in result.text and not out.exists()


def test_deploy_writes_the_manifests_without_secret_values(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("API_KEY", "s3cret-value")
    out = tmp_path / "k8s"
    args = ["deploy", "kubernetes", ECHO_ENV, "--image", "echo-env:1", "--replicas", "2"]
    result = cli(*args, "--max-replicas", "4", "--secret", "API_KEY", "--out", out)
    assert result.code == 0, result.text
    assert sorted(p.name for p in out.iterdir()) == [
        "deployment.yaml",
        "hpa.yaml",
        "secret.yaml",
        "service.yaml",
    ]
    for path in out.iterdir():
        (body,) = yaml.safe_load_all(path.read_text())
        _validate(body)
    assert "s3cret-value" not in result.text + "".join(p.read_text() for p in out.iterdir())
    again = cli(*args, "--out", out)  # without the autoscaler now: its file goes
    assert again.code == 0 and not (out / "hpa.yaml").exists()


def test_apply_without_a_cluster_names_the_kubeconfig_it_looked_for(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_extra("kubernetes")
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    args = ["deploy", "kubernetes", ECHO_ENV, "--image", "echo-env:1", "--out", tmp_path / "o"]
    result = cli(*args, "--apply")
    assert result.code == 1
    assert (
        f"Error: No Kubernetes cluster to apply to: there is no kubeconfig at {tmp_path}/.kube/config"
        in result.err
    )
    assert "Hint: Point KUBECONFIG at your cluster's kubeconfig" in result.err
    assert "Traceback" not in result.text

    missing = tmp_path / "elsewhere" / "config"
    monkeypatch.setenv("KUBECONFIG", str(missing))
    assert f"no kubeconfig at {missing} ($KUBECONFIG)" in cli(*args, "--apply").err


def test_a_kubeconfig_whose_server_does_not_answer_is_a_cluster_error(tmp_path: Path) -> None:
    require_extra("kubernetes")
    from openenv_hub.runtimes.kubernetes import KubernetesProvider

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    objects = kubernetes_objects(load_manifest(ECHO_ENV), image="echo-env:1")
    with pytest.raises(ClusterError, match=r"127\.0\.0\.1:9") as info:
        KubernetesProvider.start(objects, kubeconfig=path, timeout_s=5)
    assert info.value.address == "https://127.0.0.1:9"


def test_apply_needs_each_secret_in_the_environment(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("API_KEY", raising=False)
    args = ["deploy", "kubernetes", ECHO_ENV, "--image", "i", "--out", tmp_path, "--secret"]
    result = cli(*args, "API_KEY", "--apply")
    assert result.code == 1 and "API_KEY is not set" in result.err, result.text
    assert "Hint: Export it first" in result.err


def test_apply_sends_only_the_secrets_named_on_the_command_line(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A manifest's ``secrets:`` (its author wrote the code that reads them) never takes a
    value from the deployer's environment, a Hugging Face token least of all."""
    from openenv_hub_cli.deploy import secret_values

    environ = {"API_KEY": "k", "HF_TOKEN": "hf_" + "x" * 34, "AWS_SECRET_ACCESS_KEY": "a"}
    assert secret_values([], environ) == {}
    assert secret_values(["API_KEY"], environ) == {"API_KEY": "k"}
    assert secret_values(["HF_TOKEN", "HF_TOKEN"], environ) == {"HF_TOKEN": environ["HF_TOKEN"]}

    require_extra("kubernetes")
    monkeypatch.setenv("API_KEY", "k")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "none"))  # no cluster: the run ends there
    args = ["deploy", "kubernetes", ECHO_ENV, "--image", "i", "--out", tmp_path / "o"]
    result = cli(*args, "--secret", "OTHER_KEY", "--apply")
    assert "OTHER_KEY is not set" in result.err  # only the named one is read
    manifest = tmp_path / "env"
    shutil.copytree(ECHO_ENV, manifest)
    text = (manifest / "openenv.yaml").read_text()
    (manifest / "openenv.yaml").write_text(text + "secrets: [API_KEY]\n")
    result = cli(
        "deploy", "kubernetes", manifest, "--image", "i", "--out", tmp_path / "p", "--apply"
    )
    assert "--apply leaves API_KEY empty" in result.text
    assert "No Kubernetes cluster" in result.err and "API_KEY is not set" not in result.err
