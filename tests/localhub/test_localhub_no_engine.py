"""A LocalHub that runs Spaces where it cannot (no Docker engine, or no ``docker`` package)
says so: its Docker Spaces are STOPPED, not BUILD_ERROR or RUNNING, with a message naming what
to install or start; from_hub repeats it; and nothing logs a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from openenv_hub import GenericEnvClient
from openenv_hub.errors import SpaceNotRunningError
from openenv_hub.localhub import LocalHub

DOCKERFILE = b"ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE_IMAGE}\n"


@pytest.fixture
def no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    """A LocalHub asked to run Spaces, where no engine answers at DOCKER_HOST."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with LocalHub(data_dir=tmp_path / "data", run_spaces=True) as hub:
        yield hub


def _push(hub: LocalHub, repo_id: str) -> HfApi:
    api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
    api.create_repo(repo_id, repo_type="space", space_sdk="docker")
    api.upload_file(
        path_or_fileobj=DOCKERFILE, path_in_repo="Dockerfile", repo_id=repo_id, repo_type="space"
    )
    return api


def _says_why(message: str, repo_id: str) -> None:
    assert message.startswith(f"LocalHub cannot run {repo_id}: it runs Spaces in Docker. ")
    assert "No Docker engine answers at unix://" in message and "no-engine.sock" in message
    assert "point DOCKER_HOST at a running engine" in message
    assert "Then restart LocalHub" in message and "LocalHub.set_space_runtime" in message


def test_a_pushed_space_is_stopped_and_says_why(
    no_engine: LocalHub, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        api = _push(no_engine, "alice/echo")
        runtime = api.get_space_runtime("alice/echo")
        api.restart_space("alice/echo")
        again = api.get_space_runtime("alice/echo")
    assert runtime.stage == again.stage == "STOPPED"  # not BUILD_ERROR: the build is not at fault
    _says_why(runtime.raw["errorMessage"], "alice/echo")
    assert again.raw["errorMessage"] == runtime.raw["errorMessage"]
    assert not [record for record in caplog.records if record.exc_info]
    assert "Traceback" not in caplog.text


def test_a_fork_is_stopped_and_says_why(no_engine: LocalHub) -> None:
    api = _push(no_engine, "alice/echo")
    api.duplicate_repo("alice/echo", "alice/echo-fork", repo_type="space")
    runtime = api.get_space_runtime("alice/echo-fork")
    assert runtime.stage == "STOPPED"  # not RUNNING, with nothing behind its app URL
    _says_why(runtime.raw["errorMessage"], "alice/echo-fork")


def test_from_hub_names_the_reason(no_engine: LocalHub) -> None:
    _push(no_engine, "alice/echo")
    with pytest.raises(SpaceNotRunningError) as stopped:
        GenericEnvClient.from_hub(
            "alice/echo", endpoint=no_engine.endpoint, token=no_engine.token_for("alice")
        )
    message = str(stopped.value)
    assert message.startswith("Space alice/echo is not running (stage STOPPED): LocalHub cannot")
    _says_why(stopped.value.reason, "alice/echo")


def test_without_the_docker_package_it_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with LocalHub(data_dir=tmp_path, run_spaces=True) as hub:
        runtime = _push(hub, "alice/echo").get_space_runtime("alice/echo")
    assert runtime.stage == "STOPPED"
    message = runtime.raw["errorMessage"]
    assert "needs the 'docker' package, which is not installed" in message
    assert 'Install it with: pip install "openenv-hub[docker]"' in message
