"""docs/scale.md: every block run (or checked) as printed, from the repository root.

Placeholders the document names: echo's port 8000 becomes a free port of a server the test
starts; the cluster address 127.0.0.2:6379 becomes the test cluster's (``ray_cluster``, which
runs the block "start a cluster" itself, in tests/ray_support.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from doc_blocks import doc_block

from openenv_hub.model.manifest import Manifest, load_manifest
from openenv_hub.runtimes.kubernetes_manifests import kubernetes_objects, to_yaml

DOC = "docs/scale.md"
REPO = Path(__file__).resolve().parents[2]
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # openenv


def _run(language: str, code: str, *, cwd: Path = REPO) -> str:
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", "PATH": PATH, "RAY_USAGE_STATS_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def test_one_server(echo_server: Any) -> None:
    code = doc_block(DOC, "one server").code.replace("8000", str(echo_server.port))
    assert _run("python", code).split("\n")[:-1] == [f"hi {i}" for i in range(8)]


def test_sync_pool(echo_server: Any) -> None:
    code = doc_block(DOC, "sync pool").code.replace("8000", str(echo_server.port))
    assert _run("python", code).strip() == "['hi', 'hi', 'hi', 'hi']"


def test_one_slot_at_a_time(echo_server: Any) -> None:
    code = doc_block(DOC, "one slot at a time").code.replace("8000", str(echo_server.port))
    expected = [f"slot {slot}, turn 2" for slot in range(4)]
    assert _run("python", code).strip() == str(expected)


@pytest.mark.slow
def test_ray_pool(ray_cluster: Any) -> None:
    code = doc_block(DOC, "ray pool").code.replace("127.0.0.2:6379", ray_cluster.address)
    nodes, healthy, spread = _run("python", code).strip().splitlines()
    assert sorted(eval(nodes)) == [("127.0.0.2", "ALIVE"), ("127.0.0.3", "ALIVE")]
    assert (healthy, spread) == ("32", "[16, 16]")


def test_deploy_kubernetes_writes_what_the_document_shows(tmp_path: Path) -> None:
    (tmp_path / "envs").symlink_to(REPO / "envs")  # the command as printed, run elsewhere
    _run("bash", doc_block(DOC, "deploy kubernetes").code, cwd=tmp_path)
    written = tmp_path / "k8s" / "echo-env"
    assert sorted(p.name for p in written.iterdir()) == [
        "deployment.yaml",
        "hpa.yaml",
        "service.yaml",
    ]
    shown = doc_block(DOC, "deployment yaml").code
    assert (written / "deployment.yaml").read_text() == shown
    hpa = yaml.safe_load((written / "hpa.yaml").read_text())
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 8)


def test_resources_from_the_manifest() -> None:
    resources = yaml.safe_load(doc_block(DOC, "resources yaml").code)
    fields = load_manifest(REPO / "envs" / "echo_env").model_dump(exclude_defaults=True)
    manifest = Manifest.model_validate({**fields, **resources})
    (deployment, _) = kubernetes_objects(manifest, image="i")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {
        "requests": {"cpu": "2", "memory": "1Gi"},
        "limits": {"cpu": "2", "memory": "2Gi"},
    }
    assert "path: /health" in to_yaml([deployment])


def test_manifests_in_python() -> None:
    out = _run("python", doc_block(DOC, "manifests in python").code)
    assert out.splitlines() == ["['Deployment', 'Service']", "2"]
