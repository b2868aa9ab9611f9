"""The ``daytona`` runtime against the local Daytona on the CI engine, through the ``daytona``
SDK from PyPI: a Space runs in a sandbox whose preview URL needs its token (sent in the
handshake's header, never in the URL); its secret reaches the server's environment only;
closing the client deletes the sandbox, and so does killing the process (its reaper);
``openenv serve NS/NAME --runtime daytona`` serves replicas until Ctrl-C."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from child_processes import end_child, start_child
from daytona_support import SPACE_BUILD, echo_space, local_daytona, sandbox_containers
from echo_env import CallToolAction, EchoEnv
from polling import wait_until

from openenv_hub.errors import (
    ConfigurationError,
    ConnectError,
    DependencyNotInstalledError,
    ServerStartError,
)
from openenv_hub.localdaytona import LocalDaytona
from openenv_hub.runtimes import get_runtime, runtime_names
from openenv_hub.runtimes.daytona import DaytonaProvider, DaytonaSettings
from openenv_hub.support.progress import ProgressEvent, listening

__all__ = ["echo_space", "local_daytona"]  # the fixtures, imported to be registered here

SECRET = "sk-daytona-41c7-never-printed"
SANDBOX_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TOKEN_HEADER = "x-daytona-preview-token"


def _sdk(daytona: LocalDaytona) -> object:
    from daytona import Daytona, DaytonaConfig

    config = DaytonaConfig(api_key=daytona.api_key, api_url=daytona.api_url, target="local")
    return Daytona(config)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)  # the Space's image is built here, its packages from PyPI
async def test_a_space_runs_in_a_sandbox_behind_its_token(
    local_daytona: LocalDaytona, echo_space: str
) -> None:
    env = EchoEnv.from_hub(
        echo_space, runtime="daytona", trust_remote_code=True, env={"LOG_LEVEL": "debug"},
        secrets={"API_KEY": SECRET}, **SPACE_BUILD,
    )  # fmt: skip
    provider = env.provider
    assert isinstance(provider, DaytonaProvider) and provider.runtime == "daytona"
    (sandbox_id,) = provider.sandbox_ids
    token = provider.headers[TOKEN_HEADER]
    assert env.base_url.startswith(f"{local_daytona.api_url.removesuffix('/api')}/preview/8000-")
    assert token not in env.base_url and token not in env.url and token not in repr(env.options)
    async with env:
        await env.reset()
        step = await env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
        assert step.observation.result["data"] == "Hi"
        with EchoEnv(env.base_url, headers=provider.headers).sync() as same_sandbox:
            assert same_sandbox.call_tool("echo_message", message="sync") == "sync"
        await _refused_without_the_token(env.base_url)
        _labelled_with_auto_stop_and_no_network(local_daytona, sandbox_id)
        _secret_reached_only_the_server(local_daytona, sandbox_id)
    assert sandbox_id not in _ids(local_daytona) and sandbox_containers(sandbox_id) == []


async def _refused_without_the_token(base_url: str) -> None:
    health = f"{base_url}/health"
    async with httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(health)).status_code == 401
        assert (await http.get(health, headers={TOKEN_HEADER: "not-the-token"})).status_code == 401
    for headers in ({}, {TOKEN_HEADER: "not-the-token"}):
        with pytest.raises(ConnectError) as refused:
            await EchoEnv(base_url, headers=headers).connect()
        assert refused.value.status_code == 401


def _labelled_with_auto_stop_and_no_network(daytona: LocalDaytona, sandbox_id: str) -> None:
    from docker_support.engine import docker

    from openenv_hub.runtimes import labels

    sandbox = _sdk(daytona).get(sandbox_id)  # type: ignore[attr-defined]
    mine = {"openenv-hub": "true", "openenv-hub-runtime": "daytona"}
    assert mine.items() <= sandbox.labels.items()
    assert sandbox.labels["openenv-hub-owner"] == labels.owner_id()
    assert sandbox.auto_stop_interval == 15 and sandbox.network_block_all is True
    (container,) = sandbox_containers(sandbox_id)
    mode = docker("inspect", "--format", "{{.HostConfig.NetworkMode}}", container).stdout.strip()
    assert mode == "none"


def _secret_reached_only_the_server(daytona: LocalDaytona, sandbox_id: str) -> None:
    from docker_support.engine import docker

    (container,) = sandbox_containers(sandbox_id)
    environ = "tr '\\0' '\\n' < /proc/$(cat /tmp/openenv-server.pid)/environ"
    server_env = docker("exec", container, "sh", "-c", environ).stdout
    assert f"API_KEY={SECRET}" in server_env and "LOG_LEVEL=debug" in server_env
    config = json.loads(docker("inspect", "--format", "{{json .Config}}", container).stdout)
    assert "LOG_LEVEL=debug" in config["Env"] and SECRET not in json.dumps(config)
    answered = httpx.get(
        f"{daytona.api_url}/sandbox/{sandbox_id}",
        headers={"Authorization": f"Bearer {daytona.api_key}"},
    ).text
    assert "LOG_LEVEL" in answered and SECRET not in answered
    assert SECRET not in docker("logs", container).stdout
    assert SECRET not in docker("exec", container, "cat", "/tmp/openenv-server.log").stdout
    assert SECRET not in _command_lines()


def _command_lines() -> str:
    lines = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"))
    return "\n".join(lines)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.timeout(900)  # the Space's image is built here, its packages from PyPI
def test_serve_a_space_with_daytona_prints_each_replica_and_ctrl_c_deletes_them(
    local_daytona: LocalDaytona, echo_space: str
) -> None:
    build = {
        "OPENENV_BASE_IMAGE": SPACE_BUILD["base_image"],
        "OPENENV_BUILD_ARGS": " ".join(SPACE_BUILD["build_args"]),
        "OPENENV_TRUST_REMOTE_CODE": "1",
        "COLUMNS": "250",
    }
    command = ["serve", echo_space, "--runtime", "daytona", "--replicas", "2"]
    child = start_child(
        [sys.executable, "-c", "from openenv_hub_cli.main import main; main()", *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **build},
    )  # fmt: skip
    printed: list[str] = []
    try:
        assert child.stdout is not None
        for line in child.stdout:
            printed.append(line)
            if "Press Ctrl+C" in line:
                break
        out = "".join(printed)
        assert f"Starting the Space {echo_space} with the daytona runtime" in out, out
        ids = set(SANDBOX_ID.findall(out))
        assert len(ids) == 2 and ids == set(_ids(local_daytona)), out
        for sandbox_id in ids:
            assert f"/preview/8000-{sandbox_id}" in out
        assert "x-daytona-preview-token" in out and "openenv ps --daytona" in out
        child.send_signal(signal.SIGINT)
        rest, _ = child.communicate(timeout=120)
        assert "Stopped." in rest
    finally:
        end_child(child, signal.SIGTERM)
    wait_until(lambda: _ids(local_daytona) == [], timeout_s=30, what="the sandboxes deleted")


def _ids(daytona: LocalDaytona) -> list[str]:
    return [record.id for record in daytona.sandboxes.listed(labels={}, states=[], ids=[])]


CHILD = """
import sys, time
from echo_env import EchoEnv

env = EchoEnv.from_docker_image(sys.argv[1], runtime="daytona").sync()
print(env.provider.sandbox_ids[0], flush=True)
time.sleep(600)
"""


@pytest.mark.docker
@pytest.mark.slow
def test_killing_the_process_deletes_its_sandbox(
    local_daytona: LocalDaytona, echo_image: str
) -> None:
    child = start_child(
        [sys.executable, "-c", textwrap.dedent(CHILD), echo_image],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )  # fmt: skip
    try:
        assert child.stdout is not None
        sandbox_id = child.stdout.readline().strip()
        assert sandbox_id, child.communicate(timeout=10)
        assert local_daytona.sandboxes.find(sandbox_id).state == "started"
        assert len(sandbox_containers(sandbox_id)) == 1
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    finally:
        end_child(child, signal.SIGTERM)
    gone = lambda: sandbox_id not in _ids(local_daytona)  # noqa: E731
    wait_until(gone, timeout_s=60, what="the sandbox deleted")
    wait_until(lambda: sandbox_containers(sandbox_id) == [], timeout_s=30, what="its container")


CRASHING = "print('cannot open the game data', flush=True); raise SystemExit(3)"


@pytest.mark.docker
@pytest.mark.slow
def test_a_server_that_exits_says_so_with_its_last_lines(local_daytona: LocalDaytona) -> None:
    """...and the wait is reported as it goes (a terminal shows it), then as failed."""
    from docker_support.engine import BASE_IMAGE

    events: list[ProgressEvent] = []
    with listening(events.append), pytest.raises(ServerStartError) as failed:
        DaytonaProvider.start(BASE_IMAGE, command=["python3", "-c", CRASHING], startup_timeout_s=60)
    message = str(failed.value)
    assert failed.value.runtime == "daytona" and "its server exited" in message
    assert "(sandbox started)" in message and "cannot open the game data" in message
    assert "Traceback" not in message
    assert _ids(local_daytona) == []
    assert any(event.stage == "waiting for /health" for event in events), events
    assert events[-1].task == f"Daytona sandbox of {BASE_IMAGE}" and events[-1].failed


HEALTHY = (
    "import http.server as h, os; h.HTTPServer(('127.0.0.1', int(os.environ['PORT'])), "
    "type('Ok', (h.BaseHTTPRequestHandler,), {'do_GET': lambda s: (s.send_response(200), "
    "s.end_headers())})).serve_forever()"
)


@pytest.mark.docker
@pytest.mark.slow
def test_network_true_creates_the_sandbox_with_the_network(local_daytona: LocalDaytona) -> None:
    from docker_support.engine import BASE_IMAGE

    from openenv_hub.transport.local_ports import free_port

    port = free_port()  # on an engine without a bridge the sandbox shares the host's network
    command = ["python3", "-c", HEALTHY]
    with DaytonaProvider.start(BASE_IMAGE, command=command, network=True, port=port) as opened:
        (sandbox_id,) = opened.sandbox_ids
        assert local_daytona.sandboxes.find(sandbox_id).spec.network_block_all is False
        assert opened.base_url.endswith(f"/preview/{port}-{sandbox_id}")


@pytest.mark.docker
@pytest.mark.slow
def test_a_sandbox_that_could_not_be_deleted_is_named_in_a_warning(
    local_daytona: LocalDaytona,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from docker_support.engine import BASE_IMAGE

    from openenv_hub.transport.local_ports import free_port

    port = free_port()
    provider = DaytonaProvider.start(BASE_IMAGE, command=["python3", "-c", HEALTHY], port=port)
    (sandbox_id,) = provider.sandbox_ids
    engine = os.environ["DOCKER_HOST"]
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")  # removal fails
        with caplog.at_level("WARNING", logger="openenv_hub.runtimes.daytona"):
            provider.stop()
    finally:
        monkeypatch.setenv("DOCKER_HOST", engine)
    warned = [r.getMessage() for r in caplog.records if r.name == "openenv_hub.runtimes.daytona"]
    assert any(sandbox_id in line and "Could not delete" in line for line in warned), warned
    assert not any(local_daytona.api_key in line for line in warned)
    assert local_daytona.sandboxes.find(sandbox_id).state == "error"  # kept, not "destroyed"
    local_daytona.sandboxes.delete(sandbox_id)
    assert sandbox_containers(sandbox_id) == []


@pytest.mark.docker
def test_an_image_daytona_cannot_pull_is_said_plainly(local_daytona: LocalDaytona) -> None:
    with pytest.raises(ServerStartError) as failed:
        DaytonaProvider.start("openenv-no-such/image:never", command=["true"])
    message = str(failed.value)
    assert "Daytona did not start a sandbox of openenv-no-such/image:never" in message
    assert "is not on this Docker engine" in message and "Traceback" not in message
    assert _ids(local_daytona) == []


def test_the_daytona_runtime_is_registered_with_its_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert "daytona" in runtime_names("space") and "daytona" in runtime_names("image")
    assert "daytona" not in runtime_names("folder")
    takes = get_runtime("daytona").options["image"]
    assert {"replicas", "auto_stop", "network", "secrets"} <= takes
    with pytest.raises(ConfigurationError, match="does not take gpus"):
        EchoEnv.from_docker_image("any:latest", runtime="daytona", gpus=1)
    for name in ("DAYTONA_API_KEY", "DAYTONA_API_URL", "DAYTONA_TARGET"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="set DAYTONA_API_KEY"):
        DaytonaSettings.resolve()
    settings = DaytonaSettings.resolve(api_key="dtn_secret_key")
    assert settings.api_url == "https://app.daytona.io/api"
    assert "dtn_secret_key" not in repr(settings)


def test_without_the_daytona_package_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "daytona", None)
    with pytest.raises(DependencyNotInstalledError) as missing:
        DaytonaSettings.resolve(api_key="dtn_x", api_url="http://127.0.0.1:9/api").client()
    assert 'pip install "openenv-hub[daytona]"' in str(missing.value)
