"""A pushed Space builds and serves, as the Hub would build it: from the Space's git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hub_support import unique_repo

from openenv_hub import CallToolAction
from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_the_pushed_bundle_builds_with_its_wheel_and_serves(
    hub_env: HubEnv, echo_copy: Path, tmp_path: Path
) -> None:
    from docker_support.engine import (
        build_image,
        cleanup,
        free_port,
        require_docker,
        run_container,
        wait_http,
    )
    from echo_env import EchoEnv

    require_docker()
    repo_id = unique_repo(hub_env, "image")
    push(echo_copy, repo_id, version="0.1.0")
    space = tmp_path / "space"
    url = hub_env.hub.git_url(repo_id, token=hub_env.hub.token_for("alice"))
    subprocess.run(["git", "clone", "-q", "--branch", "0.1.0", url, str(space)], check=True)
    wheels = list((space / ".openenv" / "wheels").glob("openenv_hub-*.whl"))
    assert len(wheels) == 1  # the Space installs exactly the code that was tested

    assert "/resolve/" in (space / "pyproject.toml").read_text()  # names the wheel by URL...

    tag = f"openenv-test/{repo_id.split('/')[1]}:latest"
    hub_env.hub.clear_requests()
    build_image(space, tag, build_args={"ENABLE_WEB_INTERFACE": "false"})
    assert not [r for r in hub_env.hub.requests() if "/resolve/" in r["path"]]  # ...not needed
    port = free_port()
    container = run_container(tag, env={"PORT": str(port)})
    try:
        wait_http(f"http://127.0.0.1:{port}/health", timeout_s=60, container=container)
        with EchoEnv(base_url=f"http://127.0.0.1:{port}").sync() as env:
            env.reset()
            result = env.step(
                CallToolAction(tool_name="echo_message", arguments={"message": "built"})
            )
            assert result.observation.result["data"] == "built"  # type: ignore[attr-defined]
    finally:
        cleanup(container)
