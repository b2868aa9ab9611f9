"""LocalHub runs pushed Docker Spaces: ``openenv push --wait`` reaches RUNNING, ``from_hub``
steps the app through LocalHub's proxy (HTTP and WebSocket), variables and secrets reach the
container and never a log, and a broken Dockerfile ends in BUILD_ERROR with its log line."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cli_runner import CliResult
from doc_blocks import doc_block
from echo_env import CallToolAction, EchoEnv

from openenv_hub.hub._wait import space_logs
from openenv_hub.localhub import LocalHub

SECRET = "sk-local-7f3a9c-never-printed"
DOC = "docs/runtimes.md"


@pytest.fixture(scope="module")
def space_hub() -> Iterator[LocalHub]:
    """A LocalHub of its own that builds and runs Docker Spaces on the CI engine."""
    from docker_support.engine import BASE_IMAGE, require_docker
    from docker_support.wheelhouse import wheelhouse

    os.environ["DOCKER_HOST"] = require_docker()
    offline = f'"{BASE_IMAGE}", "ENABLE_WEB_INTERFACE": "false"'  # as the document says
    code = doc_block(DOC, "localhub with spaces").code.replace('"YOUR_BASE_IMAGE"', offline)
    code = code.replace("YOUR_WHEELHOUSE", str(wheelhouse()))
    names: dict[str, object] = {}
    exec(compile(code, DOC, "exec"), names)
    hub = names["hub"]
    assert isinstance(hub, LocalHub) and hub.space_runtime["enabled"], hub.space_runtime
    try:
        yield hub
    finally:
        hub.stop()
    gc.collect()  # a connection the proxy left open would be reported (as an error) here
    from docker_support.engine import docker

    mine = f"label=openenv-hub.owner-pid={os.getpid()}"  # the engine is shared: ours only
    left = docker(
        "ps", "-aq", "--filter", "label=openenv-hub.runtime=localhub-space", "--filter", mine
    ).stdout
    assert left.strip() == "", "LocalHub left a Space container behind"


@pytest.fixture
def on_space_hub(space_hub: LocalHub, monkeypatch: pytest.MonkeyPatch) -> LocalHub:
    monkeypatch.setenv("HF_ENDPOINT", space_hub.endpoint)
    monkeypatch.setenv("HF_TOKEN", space_hub.token_for("alice"))
    return space_hub


def _space_containers(repo_id: str) -> list[str]:
    """The containers of ``repo_id`` that this process's LocalHub runs (the engine is shared)."""
    from docker_support.engine import docker

    mine = f"label=openenv-hub.owner-pid={os.getpid()}"
    space = f"label=openenv-hub.space={repo_id}"
    return docker("ps", "-q", "--filter", space, "--filter", mine).stdout.split()


def _space_container_env(repo_id: str) -> list[str]:
    from docker_support.engine import docker

    ids = _space_containers(repo_id)
    assert len(ids) == 1, ids
    out = docker("inspect", "--format", "{{json .Config.Env}}", ids[0]).stdout
    import json

    return list(json.loads(out))


def _app_addresses(repo_id: str) -> set[str]:
    """Where the Space's app listens (its port is in its container's URL label)."""
    from docker_support.engine import docker, listening_addresses

    ids = _space_containers(repo_id)
    assert len(ids) == 1, ids
    url = docker("inspect", "--format", '{{index .Config.Labels "openenv-hub.url"}}', ids[0])
    return listening_addresses(int(url.stdout.strip().rsplit(":", 1)[1]))


def _command_lines() -> str:
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
        except OSError:
            continue
    return "\n".join(lines)


@pytest.mark.docker
@pytest.mark.slow
async def test_push_wait_runs_the_space_and_from_hub_steps_it(
    on_space_hub: LocalHub,
    echo_copy: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo_id = "alice/echo_env"
    monkeypatch.setenv("API_KEY", SECRET)
    (command,) = doc_block(DOC, "push and wait").lines
    words = command.replace("YOUR_NAME", "alice").split()
    assert words[:3] == ["openenv", "push", "envs/echo_env"]
    result = cli(*words[1:2], echo_copy, *words[3:])  # the echo env, in a copy of its own
    assert result.code == 0, result.text
    assert f"Running {repo_id}" in result.out and f"Space {repo_id}: BUILDING (" in result.err
    assert SECRET not in result.text

    env = EchoEnv.from_hub(repo_id)
    assert env.base_url == f"{on_space_hub.endpoint}/_localhub/apps/{repo_id}"
    async with env:
        await env.reset()
        step = await env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
        assert step.observation.result["data"] == "Hi"
    async with httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(f"{env.base_url}/health")).status_code == 200

    capsys.readouterr()
    code = doc_block(DOC, "space app").code.replace("YOUR_NAME", "alice")
    await asyncio.to_thread(exec, compile(code, DOC, "exec"), {})
    assert capsys.readouterr().out.strip() == "Hi"

    environment = _space_container_env(repo_id)
    assert "LOG_LEVEL=debug" in environment and f"API_KEY={SECRET}" in environment
    assert _app_addresses(repo_id) == {"127.0.0.1"}  # no other interface
    build_log = space_logs(repo_id, build=True)
    run_log = space_logs(repo_id, build=False)
    assert any("Step 1/" in line for line in build_log), build_log[:5]
    assert SECRET not in "\n".join(build_log + run_log)
    assert SECRET not in str(on_space_hub.requests())
    assert SECRET not in _command_lines()


@pytest.mark.docker
@pytest.mark.slow
def test_from_hub_with_the_docker_runtime_builds_that_commit_and_runs_it(
    on_space_hub: LocalHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the push above: the Space's image built here (once per commit) and run."""
    from docker_support.engine import BASE_IMAGE

    from openenv_hub.docker import space_image_tag
    from openenv_hub.runtimes.docker import DockerProvider

    monkeypatch.setenv("OPENENV_BASE_IMAGE", BASE_IMAGE)
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "ENABLE_WEB_INTERFACE=false")
    with EchoEnv.from_hub("alice/echo_env", runtime="docker", trust_remote_code=True).sync() as env:
        provider = env.provider
        assert isinstance(provider, DockerProvider) and provider.runtime == "docker"
        (tag,) = provider.container.image.tags
        commit = provider.container.labels["openenv-hub.commit"]
        assert tag == space_image_tag("alice/echo_env", commit) and len(commit) == 40
        assert env.call_tool("echo_message", message="built here") == "built here"
    assert provider.status() == "removed"


BROKEN_STEP = 'RUN echo "fetching the model weights: mirror unreachable" && exit 7\n'


@pytest.mark.docker
@pytest.mark.slow
def test_a_broken_dockerfile_shows_build_error_and_the_failing_line(
    on_space_hub: LocalHub, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    dockerfile = echo_copy / "Dockerfile"
    lines = dockerfile.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("FROM")) + 1
    dockerfile.write_text("".join([*lines[:at], BROKEN_STEP, *lines[at:]]))

    result = cli("push", echo_copy, "--repo-id", "alice/broken_env", "--wait")
    assert result.code == 1, result.text
    assert "BUILD_ERROR" in result.err and "Build log of alice/broken_env" in result.err
    assert "fetching the model weights: mirror unreachable" in result.err
    assert "returned a non-zero code: 7" in result.err
    assert "Traceback" not in result.text
    runtime = on_space_hub.space_runtime
    assert runtime["enabled"]


CRASHING_SPACE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
CMD ["python3", "-c", "import sys; print('cannot open the game data', flush=True); sys.exit(2)"]
"""


@pytest.mark.docker
@pytest.mark.slow
def test_a_crashing_app_is_runtime_error_and_a_paused_space_stops(on_space_hub: LocalHub) -> None:
    from huggingface_hub import HfApi

    from openenv_hub.hub import wait_for_space

    api = HfApi(endpoint=on_space_hub.endpoint, token=on_space_hub.token_for("alice"))
    api.create_repo("alice/crashing", repo_type="space", space_sdk="docker")
    api.upload_file(
        path_or_fileobj=CRASHING_SPACE.encode(), path_in_repo="Dockerfile",
        repo_id="alice/crashing", repo_type="space",
    )  # fmt: skip
    state = wait_for_space("alice/crashing", poll_s=0.2, timeout_s=300)
    assert state.stage == "RUNTIME_ERROR" and "cannot open the game data" in "\n".join(state.logs)

    assert api.pause_space("alice/echo_env").stage == "PAUSED"  # the Space the first test ran
    app = f"{on_space_hub.endpoint}/_localhub/apps/alice/echo_env/health"
    wait_until_gone = wait_for_space("alice/echo_env", poll_s=0.2, timeout_s=60)
    assert wait_until_gone.stage == "PAUSED" and httpx.get(app, timeout=10).status_code == 503
    api.restart_space("alice/echo_env")
    assert wait_for_space("alice/echo_env", poll_s=0.2, timeout_s=300).running
    assert httpx.get(app, timeout=10).status_code == 200


def test_without_an_engine_app_urls_say_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import HfApi

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with LocalHub(run_spaces=True) as hub:
        assert not hub.space_runtime["enabled"]
        api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
        api.create_repo("alice/echo_env", repo_type="space", space_sdk="docker")
        reply = httpx.get(f"{hub.endpoint}/_localhub/apps/alice/echo_env/health", timeout=10)
    assert reply.status_code == 503
    assert "runs them in Docker" in reply.text and "no-engine.sock" in reply.text
