"""docs/runtimes.md, "Hugging Face Jobs": every block run as printed against a LocalHub that
runs Jobs (made by the document's own block), with the echo environment pushed as alice's."""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_blocks import doc_block
from jobs_support import ECHO_ENV, job_containers

from openenv_hub.localhub import LocalHub

DOC = "docs/runtimes.md"
REPO = Path(__file__).resolve().parents[2]
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # openenv


def _code(name: str) -> str:
    return doc_block(DOC, name).code.replace("YOUR_NAME", "alice")


def _exec(name: str) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(_code(name), DOC, "exec"), {})
    return printed.getvalue()


@pytest.fixture(scope="module")
def doc_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    from docker_support.engine import BASE_IMAGE, require_docker
    from docker_support.wheelhouse import wheelhouse

    from openenv_hub.hub import push

    os.environ["DOCKER_HOST"] = require_docker()
    importlib.import_module(
        "huggingface_hub.constants"
    )  # freezes the session's endpoint, not this hub's
    offline = f'"{BASE_IMAGE}", "ENABLE_WEB_INTERFACE": "false"'  # as the document says
    code = doc_block(DOC, "localhub with jobs").code.replace('"YOUR_BASE_IMAGE"', offline)
    code = code.replace("YOUR_WHEELHOUSE", str(wheelhouse()))
    names: dict[str, object] = {}
    exec(compile(code, DOC, "exec"), names)
    hub = names["hub"]
    assert isinstance(hub, LocalHub)
    folder = tmp_path_factory.mktemp("doc") / "echo_env"
    shutil.copytree(ECHO_ENV, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_ENDPOINT", hub.endpoint)
        patch.setenv("HF_TOKEN", hub.token_for("alice"))
        try:
            push(folder, "alice/echo_env")
            yield hub
        finally:
            hub.stop()
    assert job_containers() == [], "a Job's container was left behind"


def test_the_registry_lists_the_jobs_runtime() -> None:
    printed = subprocess.run(
        [sys.executable, "-c", doc_block(DOC, "runtimes").code],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    assert "jobs ['image', 'space']" in printed.splitlines()


@pytest.mark.docker
@pytest.mark.slow
def test_jobs_from_hub_block(doc_hub: LocalHub) -> None:
    assert _exec("jobs from_hub").strip() == "Hi"


@pytest.mark.docker
@pytest.mark.slow
def test_jobs_pool_block(doc_hub: LocalHub) -> None:
    spread = ast.literal_eval(_exec("jobs pool").strip())
    assert sorted(spread.values()) == [8, 8]
    assert all(f"{doc_hub.endpoint}/_localhub/expose/" in url for url in spread)


@pytest.mark.docker
@pytest.mark.slow
def test_serve_jobs_block(doc_hub: LocalHub) -> None:
    done = subprocess.run(
        ["bash", "-e", "-c", _code("serve jobs")],
        cwd=REPO, env={**os.environ, "COLUMNS": "250", "PATH": PATH},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    ids = sorted(set(re.findall(r"Cancelled Job ([0-9a-f]{24})", done.stdout)))
    assert len(ids) == 2, done.stdout
    (stop_line,) = [line for line in done.stdout.splitlines() if "Stop them with:" in line]
    assert set(stop_line.split("openenv stop --jobs ")[1].split()) == set(ids)
    assert "$0.01/hour" in done.stdout and done.stdout.count("(detached)") == 2
