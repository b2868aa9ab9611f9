"""A LocalHub that runs Jobs on the CI engine, with the echo environment pushed as a Space, for
the tests of the ``jobs`` runtime, its pools and ``openenv serve --jobs``.

The Space's image is built once (by the first Job of it); every test that starts Jobs shares
that hub, and the hub's fixture fails the module if a Job's container is left behind.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from openenv_hub.localhub import LocalHub

ECHO_ENV = Path(__file__).resolve().parents[2] / "envs" / "echo_env"
SPACE = "alice/echo_env"


def job_containers(job_id: str = "") -> list[str]:
    """The ids of the Job containers of this process's LocalHubs (of ``job_id``, when given);
    not another test process's, which may run Jobs at the same time."""
    from docker_support.engine import docker

    from openenv_hub.runtimes import labels

    label = (
        f"label=openenv-hub.job={job_id}" if job_id else "label=openenv-hub.runtime=localhub-job"
    )
    mine = f"label={labels.OWNER}={labels.owner_id()}"
    return docker("ps", "-aq", "--filter", label, "--filter", mine).stdout.split()


@pytest.fixture(scope="module")
def jobs_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """LocalHub with Jobs on, ``HF_ENDPOINT``/``HF_TOKEN`` pointing at it (alice), and the
    echo environment pushed as ``alice/echo_env``."""
    from docker_support.engine import BASE_IMAGE, require_docker
    from docker_support.wheelhouse import wheelhouse

    from openenv_hub.hub import push

    os.environ["DOCKER_HOST"] = require_docker()
    importlib.import_module(
        "huggingface_hub.constants"
    )  # freezes the session's endpoint, not this hub's
    build_args = {"BASE_IMAGE": BASE_IMAGE, "ENABLE_WEB_INTERFACE": "false"}
    hub = LocalHub(run_jobs=True, space_build_args=build_args, space_wheelhouse=wheelhouse())
    hub.start()
    folder = tmp_path_factory.mktemp("jobs") / "echo_env"
    shutil.copytree(ECHO_ENV, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_ENDPOINT", hub.endpoint)
        patch.setenv("HF_TOKEN", hub.token_for("alice"))
        try:
            push(folder, SPACE)
            yield hub
        finally:
            hub.stop()
    assert job_containers() == [], "a Job's container was left behind"
