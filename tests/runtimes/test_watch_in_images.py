"""An environment's image serves no watch stream unless started with watching on, even where a
runtime runs it on the host's loopback (``OPENENV_HOST=127.0.0.1``), where the rule of who may
watch would otherwise see a local server: the images set ``OPENENV_WATCH=0``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from echo_env import EchoEnv
from runtime_support import ECHO_ENV, containers, openenv_build, wait_until

from openenv_hub.server.watch import WATCH_SETTING

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
UI_TAG = "openenv-test-rt/echo-env-ui:latest"


@pytest.fixture(scope="module")
def echo_image_with_ui(docker_host: str) -> str:
    openenv_build(ECHO_ENV, UI_TAG, web=True)
    return UI_TAG


def watch_status(env: Any) -> int:
    """The watch stream's status, once the UI (built after the server starts) is up."""
    wait_until(lambda: httpx.get(f"{env.base_url}/web/", timeout=60).status_code == 200,
               timeout_s=180, what="the image's web UI answers")  # fmt: skip
    with httpx.stream("GET", f"{env.base_url}/web/watch", timeout=60) as stream:
        return stream.status_code


async def test_the_image_serves_no_watch_stream_unless_started_with_watching_on(
    echo_image_with_ui: str,
) -> None:
    async with EchoEnv.from_docker_image(echo_image_with_ui) as env:
        await env.reset()
        assert watch_status(env) == 403
    on = {WATCH_SETTING: "1"}
    async with EchoEnv.from_docker_image(echo_image_with_ui, env_vars=on) as env:
        assert watch_status(env) == 200
    assert containers(f"ancestor={echo_image_with_ui}", "status=running") == []


@pytest.mark.parametrize(
    "dockerfile",
    [
        *sorted(REPO.glob("envs/*/Dockerfile")),
        REPO / "templates/env/{{cookiecutter.name}}/Dockerfile",
    ],
    ids=lambda path: path.parent.name,
)
def test_every_image_we_ship_turns_watching_off(dockerfile: Path) -> None:
    assert "    OPENENV_WATCH=0 \\\n" in dockerfile.read_text()
