"""docs/runtimes.md, "Daytona": every block run as printed against the local Daytona that the
document's own block starts, with the echo environment pushed as a Space of alice."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from daytona_support import SPACE_BUILD, echo_space, sandbox_containers
from doc_blocks import doc_block

from openenv_hub.localdaytona import LocalDaytona
from openenv_hub.runtimes.daytona import DaytonaProvider

__all__ = ["echo_space"]  # the fixture, imported to be registered here

DOC = "docs/runtimes.md"
REPO = Path(__file__).resolve().parents[2]
PATH = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # openenv


def _exec(name: str, space: str) -> str:
    code = doc_block(DOC, name).code.replace("YOUR_NAME/echo_env", space)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, DOC, "exec"), {})
    return printed.getvalue()


@pytest.fixture(scope="module")
def doc_daytona() -> Iterator[LocalDaytona]:
    """The local Daytona the document's block starts (and the variables it sets, undone)."""
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    before = dict(os.environ)
    names: dict[str, object] = {}
    exec(compile(doc_block(DOC, "local daytona").code, DOC, "exec"), names)
    daytona = names["daytona"]
    assert isinstance(daytona, LocalDaytona)
    assert os.environ["DAYTONA_API_URL"] == daytona.api_url
    build = {
        "OPENENV_BASE_IMAGE": SPACE_BUILD["base_image"],
        "OPENENV_BUILD_ARGS": " ".join(SPACE_BUILD["build_args"]),
    }
    os.environ.update(build)
    try:
        yield daytona
    finally:
        daytona.stop()
        os.environ.clear()
        os.environ.update(before)
    assert sandbox_containers() == [], "a sandbox's container was left behind"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)  # the Space's image is built here, its packages from PyPI
def test_daytona_from_hub_block(doc_daytona: LocalDaytona, echo_space: str) -> None:
    assert _exec("daytona from_hub", echo_space).strip() == "Hi"


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)  # the Space's image is built here, its packages from PyPI
def test_daytona_pool_block(doc_daytona: LocalDaytona, echo_space: str) -> None:
    spread = ast.literal_eval(_exec("daytona pool", echo_space).strip())
    assert sorted(spread.values()) == [8, 8]
    assert all(f"{doc_daytona.api_url.removesuffix('/api')}/preview/8000-" in url for url in spread)


@pytest.mark.docker
@pytest.mark.slow
def test_daytona_ps_and_stop_block(doc_daytona: LocalDaytona, echo_image: str) -> None:
    with DaytonaProvider.start(echo_image) as provider:
        (sandbox_id,) = provider.sandbox_ids
        done = subprocess.run(
            ["bash", "-e", "-c", doc_block(DOC, "daytona ps and stop").code],
            cwd=REPO, env={**os.environ, "COLUMNS": "250", "PATH": PATH},
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        (row,) = [line for line in done.stdout.splitlines() if re.match(sandbox_id, line)]
        assert "started" in row
        assert f"Deleted sandbox {sandbox_id}" in done.stdout
        assert sandbox_containers(sandbox_id) == []
