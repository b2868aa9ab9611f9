"""``openenv serve --runtime uv|docker``, ``openenv ps`` and ``openenv stop``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from child_processes import end_child, start_child
from cli_runner import CliResult
from doc_blocks import doc_block

from openenv_hub.transport.local_ports import free_port, port_in_use, wait_for_health

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"


@pytest.fixture
def docker_host(monkeypatch: pytest.MonkeyPatch) -> str:
    from docker_support.engine import require_docker

    host = require_docker()
    monkeypatch.setenv("DOCKER_HOST", host)
    return host


@pytest.fixture
def serve_process() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """``openenv serve ...`` in a process of its own (stopped at the end if still running, and
    its process group killed if anything lingers)."""
    started: list[subprocess.Popen[str]] = []

    def start(*args: object) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", *map(str, args)]
        process = start_child(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=os.environ.copy(),
        )
        started.append(process)
        return process

    yield start
    for process in started:
        end_child(process)


def _wait_for(process: subprocess.Popen[str], port: int) -> str:
    """Read the output of ``openenv serve`` until it says it serves; return what it printed."""
    assert process.stdout is not None
    seen = []
    for line in process.stdout:  # ends at EOF if serve exits (pytest's timeout bounds the wait)
        seen.append(line)
        if "Press Ctrl+C to stop." in line:
            wait_for_health(f"http://127.0.0.1:{port}", timeout_s=30)
            return "".join(seen)
    raise AssertionError(f"openenv serve did not come up:\n{''.join(seen)[-4000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl_c", "sigterm"])
def test_serve_with_uv_stops_on_ctrl_c_or_sigterm(
    serve_process: Callable[..., subprocess.Popen[str]], stop: signal.Signals
) -> None:
    port = free_port()
    process = serve_process(ECHO_ENV, "--runtime", "uv", "--port", port)
    output = _wait_for(process, port)
    process.send_signal(stop)
    output += process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output and "Stopped." in output
    assert not port_in_use("127.0.0.1", port)


@pytest.mark.slow
def test_serve_with_uv_says_another_process_stopped_its_server(
    serve_process: Callable[..., subprocess.Popen[str]],
) -> None:
    """The server killed from outside (as ``openenv stop`` or ``kill`` do) is no error."""
    import psutil

    port = free_port()
    process = serve_process(ECHO_ENV, "--runtime", "uv", "--port", port)
    output = _wait_for(process, port)
    (server,) = [
        child
        for child in psutil.Process(process.pid).children(recursive=True)
        if "uvicorn" in child.cmdline()
    ]
    server.terminate()
    output += process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert "The server was stopped from outside: it got SIGTERM from another process." in output
    assert "Error" not in output and "Stopped." in output


@pytest.mark.docker
@pytest.mark.slow
def test_serve_with_docker_says_openenv_stop_removed_its_container(
    docker_host: str,
    cli: Callable[..., CliResult],
    serve_process: Callable[..., subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``openenv stop NAME`` from another terminal ends a foreground serve with exit 0."""
    from docker_support.engine import BASE_IMAGE, remove_images

    monkeypatch.setenv("OPENENV_BASE_IMAGE", BASE_IMAGE)
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "ENABLE_WEB_INTERFACE=false")
    tag = f"openenv-test-rt/stopped-from-outside:{os.getpid()}"
    port = free_port()
    process = serve_process(ECHO_ENV, "--runtime", "docker", "--port", port, "--tag", tag)
    try:
        _wait_for(process, port)
        listed = json.loads(cli("ps", "--json").out)
        (mine,) = [i for i in listed if i["url"] == f"http://127.0.0.1:{port}"]
        assert cli("stop", mine["name"]).code == 0
        output = process.communicate(timeout=60)[0]
    finally:
        remove_images(tag)
    assert process.returncode == 0, output
    assert "The server was stopped from outside: its container was removed (by openenv stop " in (
        output
    )
    assert "Error" not in output and "Stopped." in output


# Serial: the document's 'openenv stop --all' removes every openenv-hub container on the engine,
# a neighbouring test's among them.
@pytest.mark.serial
@pytest.mark.docker
@pytest.mark.slow
def test_the_documented_serve_ps_and_stop(
    docker_host: str,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """docs/runtimes.md "cli", line by line as printed (a free port instead of 8000)."""
    from docker_support.engine import BASE_IMAGE

    # 'openenv stop --all' ends the recorded server processes too: only this test's
    monkeypatch.setenv("OPENENV_HUB_CACHE", str(tmp_path / "cache"))

    monkeypatch.setenv("OPENENV_BASE_IMAGE", BASE_IMAGE)  # offline, as the document says
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "ENABLE_WEB_INTERFACE=false")
    port = free_port()
    serve, ps, stop = doc_block("docs/runtimes.md", "cli").lines
    serve_args = serve.removesuffix("&").replace("8000", str(port)).split()
    process = start_child(
        [sys.executable, "-m", "openenv_hub_cli.main", *serve_args[1:]],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ.copy(),
    )
    try:
        _wait_for(process, port)
        listed = cli(*ps.split()[1:], "--json")
        assert listed.code == 0, listed.text
        (mine,) = [i for i in json.loads(listed.out) if i["url"] == f"http://127.0.0.1:{port}"]
        assert mine["runtime"] == "docker" and mine["status"] == "running"
        assert mine["owner_pid"] == process.pid and mine["owner_alive"]
        table = cli(*ps.split()[1:])
        assert mine["name"] in table.out and "RUNTIME" in table.out

        stopped = cli(*stop.split()[1:])
        assert stopped.code == 0 and f"Removed container {mine['name']}" in stopped.out
        output = process.communicate(timeout=60)[0]  # the server went away: serve says why
        assert process.returncode == 0, output
        assert "The server was stopped from outside: its container was removed (by openenv " in (
            output
        )
        assert "Error" not in output
        assert all(i["name"] != mine["name"] for i in json.loads(cli("ps", "--json").out))
    finally:
        end_child(process)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.docker
def test_ps_shows_what_a_dead_process_left_and_stop_removes_it(
    docker_host: str, cli: Callable[..., CliResult]
) -> None:
    from docker_support.engine import BASE_IMAGE

    from openenv_hub.docker import docker_client
    from openenv_hub.runtimes import labels

    tags = {**labels.labels_for("docker", source=BASE_IMAGE), labels.OWNER_PID: str(_dead_pid())}
    client = docker_client()
    left = [
        client.containers.run(
            BASE_IMAGE,
            ["sleep", "300"],
            detach=True,
            labels=tags,
            network_mode="host",
            name=f"openenv-test-left-{i}-{os.getpid()}",
        )
        for i in range(2)
    ]
    try:
        table = cli("ps")
        assert table.code == 0, table.text
        for container in left:
            line = next(row for row in table.out.splitlines() if container.name in row)
            assert "(gone)" in line and "docker" in line
        stopped = cli("stop", *(container.name for container in left))
        assert stopped.code == 0, stopped.text
        for container in left:
            assert f"Removed container {container.name}" in stopped.out
        names = {item["name"] for item in json.loads(cli("ps", "--json").out)}
        assert names.isdisjoint(c.name for c in left)
    finally:
        for container in left:
            with contextlib.suppress(Exception):
                container.remove(force=True)


@pytest.mark.docker
def test_stop_refuses_unknown_names(docker_host: str, cli: Callable[..., CliResult]) -> None:
    unknown = cli("stop", "no-such-server")
    assert unknown.code == 1 and "no-such-server" in unknown.err and "openenv ps" in unknown.err
    assert "Traceback" not in unknown.err


def test_stop_needs_names_or_all(cli: Callable[..., CliResult]) -> None:
    result = cli("stop")
    assert result.code == 1 and "--all" in result.err


def test_ps_without_an_engine_says_where_it_looked(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The other servers are listed all the same; one line says what was not, and why."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    monkeypatch.setenv("OPENENV_HUB_CACHE", str(tmp_path / "cache"))  # no server process
    result = cli("ps")
    assert result.code == 0 and "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert line.startswith("Not listed: containers and Swarm services (docker, swarm): ")
    assert f"No Docker engine answers at unix://{tmp_path}/none.sock" in line
    assert "DOCKER_HOST" in line.partition("none.sock")[2]  # what to do
    assert "Nothing started by openenv-hub runs (asked: server processes)." in result.out


def test_serve_rejects_an_unknown_runtime(cli: Callable[..., CliResult]) -> None:
    result = cli("serve", ECHO_ENV, "--runtime", "podman")
    assert result.code == 1 and "Unknown runtime 'podman'" in result.err


@pytest.mark.parametrize(
    ("args", "code"), [(["ps"], 0), (["stop", "openenv-no-such-server"], 1)], ids=["ps", "stop"]
)
def test_ps_and_stop_without_the_docker_package_name_the_extra(
    args: list[str], code: int, tmp_path: Path
) -> None:
    """ps lists what it can (exit 0); stop of a name found nowhere fails; both name the extra
    that lists containers."""
    script = (
        "import sys\nsys.modules['docker'] = None  # as if it were not installed\n"
        f"from openenv_hub_cli.main import main\nmain({args!r})"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "OPENENV_HUB_CACHE": str(tmp_path)},
    )
    assert done.returncode == code, done.stdout + done.stderr
    assert 'pip install "openenv-hub[docker]"' in done.stderr
    assert "ModuleNotFoundError" not in done.stderr and "Unexpected error" not in done.stderr
