"""The author's workflow of docs/authoring.md, run exactly as written (port and tools aside)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from child_processes import end_child, start_child
from cli_runner import CliResult
from doc_blocks import doc_block

from openenv_hub.transport.local_ports import free_port


def workflow_commands(document: str = "docs/authoring.md") -> list[str]:
    return doc_block(document, "workflow").lines


def test_the_readme_shows_the_tested_workflow() -> None:
    assert workflow_commands("README.md") == workflow_commands()


def test_the_workflow_is_init_serve_validate_build() -> None:
    verbs = [line.split()[1] for line in workflow_commands() if line.startswith("openenv ")]
    assert verbs == ["init", "serve", "validate", "validate", "build"]


def test_init_the_template_and_the_docs_agree_on_how_to_install_for_work(
    cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """The install line that makes the next line, ``pytest``, work: the workflow block, the
    "Next:" lines of openenv init and the generated README say the same."""
    install, test = workflow_commands()[2:4]
    assert (install, test) == ('pip install -e ".[dev]"', "pytest")
    result = cli("init", "my_env", "--no-input", "--output-dir", tmp_path)
    assert result.code == 0, result.text
    next_lines = result.out.split("Next:\n", 1)[1].splitlines()
    assert next_lines[1:3] == [f"  {install}", f"  {test}"]
    generated = (tmp_path / "my_env" / "README.md").read_text(encoding="utf-8")
    assert f"\n{install}\n" in generated
    pyproject = (tmp_path / "my_env" / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dev = ["pytest>=8"]' in pyproject


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(900)  # the block installs, serves and builds an image: its script gets 840 s
def test_the_documented_workflow_runs(fresh_venv: Path, tmp_path: Path) -> None:
    from docker_support.engine import require_docker

    docker_host = require_docker()
    # The block installs what `pytest` needs: start from a venv without pytest.
    bin_dir = fresh_venv / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "uninstall", "-q", "-y", "pytest"])
    assert not (bin_dir / "pytest").exists()
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
    process = start_child(
        ["bash", "-c", bash], cwd=tmp_path, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=840)
    finally:
        # However the test ends (a timeout kills bash before its trap runs): the whole group
        # gets SIGTERM, the server and docker's CLI included, which passes it on to the
        # container (--rm then removes it); end_child kills what is left.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        end_child(process)
    assert process.returncode == 0, f"{stdout[-4000:]}\n{stderr[-4000:]}"
    assert "Built openenv-my-env:latest" in stdout
