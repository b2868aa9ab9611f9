"""docs/runtimes.md: the local, uv and Docker blocks, run from the repository root as printed.

The Docker build runs offline with ``OPENENV_BASE_IMAGE`` (the test base image) and
``OPENENV_BUILD_ARGS=ENABLE_WEB_INTERFACE=false``, as the document says.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from doc_blocks import doc_block
from runtime_support import NO_UI, REPO, containers

from openenv_hub.runtimes import labels

DOC = "docs/runtimes.md"
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # openenv


def _run(language: str, code: str, **env: str) -> str:
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, "COLUMNS": "200", "PATH": PATH, **env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done.stdout


def test_runtimes() -> None:
    lines = _run("python", doc_block(DOC, "runtimes").code).splitlines()
    assert lines == sorted(lines)
    assert {
        "docker ['folder', 'image', 'space']",
        "kubernetes ['folder', 'image']",
        "local ['folder', 'space']",
        "ray ['folder']",
        "space ['space']",
        "swarm ['folder', 'image', 'space']",
        "uv ['folder', 'space']",
        "daytona ['image', 'space']",
    } <= set(lines)


def test_a_runtime_of_your_own() -> None:
    assert _run("python", doc_block(DOC, "a runtime of your own").code).strip() == "quiet Hi"


def test_local_folder() -> None:
    assert _run("python", doc_block(DOC, "local folder").code).strip() == "Hi"


@pytest.mark.slow
def test_uv_folder() -> None:
    out = _run("python", doc_block(DOC, "uv folder").code)
    assert out.strip() == "{'message': 'Hi', 'length': 2}"


@pytest.mark.docker
@pytest.mark.slow
def test_build_an_image_then_from_docker_image_three_ways(docker_host: str) -> None:
    from docker_support.engine import BASE_IMAGE

    _run(
        "bash",
        doc_block(DOC, "build an image").code,
        OPENENV_BASE_IMAGE=BASE_IMAGE,
        OPENENV_BUILD_ARGS=NO_UI,
    )
    out = _run("python", doc_block(DOC, "docker image").code)
    assert out.split() == ["awaited", "entered", "sync"]
    assert containers(f"label={labels.MANAGED}=true", "ancestor=echo-env:latest") == []
