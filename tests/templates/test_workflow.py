"""The author's workflow of docs/authoring.md, run exactly as written (port and tools aside)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from doc_blocks import doc_block

from openenv_hub.providers.local import free_port


def workflow_commands(document: str = "docs/authoring.md") -> list[str]:
    return doc_block(document, "workflow").lines


def test_the_readme_shows_the_tested_workflow() -> None:
    assert workflow_commands("README.md") == workflow_commands()


def test_the_workflow_is_init_serve_validate_build() -> None:
    verbs = [line.split()[1] for line in workflow_commands() if line.startswith("openenv ")]
    assert verbs == ["init", "serve", "validate", "validate", "build"]


@pytest.mark.slow
@pytest.mark.docker
def test_the_documented_workflow_runs(fresh_venv: Path, tmp_path: Path) -> None:
    from docker_support.engine import require_docker

    docker_host = require_docker()
    port, image_port = str(free_port()), str(free_port())
    script = "\n".join(line.replace("8000", port) for line in workflow_commands())
    # Then run the image as docs/authoring.md shows, on a port of its own.
    (docker_run,) = doc_block("docs/authoring.md", "docker run").lines
    script += f"\n{docker_run.replace('8000', image_port)} &"
    script += f"\nopenenv validate http://127.0.0.1:{image_port} --wait 60"
    env = {
        **os.environ,
        "PATH": f"{fresh_venv / 'bin'}:{os.environ['PATH']}",
        "VIRTUAL_ENV": str(fresh_venv),
        "DOCKER_HOST": docker_host,
        "OPENENV_BASE_IMAGE": os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311"),
    }
    bash = f"set -e\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n{script}\n"
    done = subprocess.run(
        ["bash", "-c", bash],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert "Built openenv-my-env:latest" in done.stdout
