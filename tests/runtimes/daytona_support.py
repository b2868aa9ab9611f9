"""A local Daytona on the CI engine, with ``DAYTONA_API_URL``, ``DAYTONA_API_KEY`` and
``DAYTONA_TARGET`` pointing at it, for the tests of the ``daytona`` runtime, its pools and its
commands. The ``daytona`` SDK from PyPI, unpatched, talks to it.

The fixture fails the module if a sandbox's container of this process is left behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from openenv_hub.localdaytona import LocalDaytona
from openenv_hub.localhub import LocalHub

ECHO_ENV = Path(__file__).resolve().parents[2] / "envs" / "echo_env"
#: The options that build a Space's image with the test base image, without the web UI.
SPACE_BUILD = {
    "base_image": os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311"),
    "build_args": ["ENABLE_WEB_INTERFACE=false"],
}


def sandbox_containers(sandbox_id: str = "") -> list[str]:
    """The ids of the containers of this process's local Daytonas (of ``sandbox_id``, when
    given); not another test process's, which may run sandboxes at the same time."""
    from docker_support.engine import docker

    from openenv_hub.runtimes import labels

    of = f"openenv-hub.sandbox={sandbox_id}" if sandbox_id else "openenv-hub.runtime=localdaytona"
    mine = f"label={labels.OWNER}={labels.owner_id()}"
    return docker("ps", "-aq", "--filter", f"label={of}", "--filter", mine).stdout.split()


@pytest.fixture(scope="module")
def local_daytona() -> Iterator[LocalDaytona]:
    """A local Daytona on the CI engine, the ``DAYTONA_*`` variables pointing at it."""
    from docker_support.engine import require_docker

    os.environ["DOCKER_HOST"] = require_docker()
    daytona = LocalDaytona().start()
    with pytest.MonkeyPatch.context() as patch:
        for name, value in daytona.environment().items():
            patch.setenv(name, value)
        try:
            yield daytona
        finally:
            daytona.stop()
    assert sandbox_containers() == [], "a sandbox's container was left behind"


@pytest.fixture(scope="session")
def echo_space(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The echo environment pushed to the session's LocalHub as a Space of alice: its id.
    (Build its image with :data:`SPACE_BUILD`: the test base image, no web UI.)"""
    from openenv_hub.hub import push

    folder = tmp_path_factory.mktemp("daytona-space") / "echo_env"
    shutil.copytree(ECHO_ENV, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    repo_id = f"alice/echo-daytona-{uuid.uuid4().hex[:8]}"
    push(folder, repo_id, endpoint=local_hub.endpoint, token=local_hub.token_for("alice"))
    return repo_id
