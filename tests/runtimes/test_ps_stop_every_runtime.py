"""``openenv ps`` and ``openenv stop`` go through the registry: each runtime's inventory lists and
stops what it started (a runtime of another package too); the server processes of the local
runtime and of ``openenv serve`` are listed and stopped like containers; and without the
``docker`` package, ps lists what it can and says in one line what needs the package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from child_processes import end_child, start_child
from cli_runner import CliResult
from runtime_support import ECHO_ENV, REPO

from openenv_hub.runtimes import register, start, unregister
from openenv_hub.transport.local_ports import free_port, wait_for_health

#: The CLI with the ``docker`` package made unimportable, as where it is not installed.
WITHOUT_DOCKER = (
    "import sys; sys.modules['docker'] = None; "
    "from openenv_hub_cli.main import main; main(sys.argv[1:])"
)


@pytest.fixture(autouse=True)
def own_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Server processes recorded in a cache of this test's own (not other runs' servers), and
    no Docker engine: ``stop --all`` on the suite's engine would remove the containers of every
    other test that runs at the same time (a local Daytona's sandboxes among them)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("OPENENV_HUB_CACHE", str(cache))
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    return cache


@pytest.fixture
def listed_runtime() -> Iterator[object]:
    import listed_runtime

    register("listed_runtime", "listed_runtime:ListedRuntime")
    listed_runtime.STARTED[:] = [listed_runtime.server("one"), listed_runtime.server("two")]
    listed_runtime.REMOVED.clear()
    yield listed_runtime
    unregister("listed_runtime")


def _without_docker(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_DOCKER, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "250"},
    )


def _gone(pid: int, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state == "Z":  # it ended; its parent has not waited for it yet
            return True
        time.sleep(0.1)
    return False


def test_without_the_docker_package_ps_lists_the_servers_it_can_and_says_what_needs_it() -> None:
    with start("local", "folder", ECHO_ENV) as server:
        (pid,) = [replica.pid for replica in server.replicas()]
        listed = _without_docker("ps")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        assert server.base_url in listed.stdout and f"local-{pid}" in listed.stdout
        lines = listed.stderr.strip().splitlines()
        assert len(lines) == 1, listed.stderr
        assert lines[0].startswith("Not listed: containers and Swarm services (docker, swarm): ")
        assert "needs the 'docker' package" in lines[0] and "openenv-hub[docker]" in lines[0]

        as_json = json.loads(_without_docker("ps", "--json").stdout)
        (mine,) = [item for item in as_json if item["url"] == server.base_url]
        assert mine["runtime"] == "local" and mine["kind"] == "process"
        assert mine["owner_pid"] == os.getpid() and mine["owner_alive"]

        stopped = _without_docker("stop", f"local-{pid}")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert f"Removed process local-{pid} (local)" in stopped.stdout
        assert _gone(pid)
        # /proc shows the process as a zombie once its main thread ends, while its other
        # threads may still be exiting; only then can its parent collect it
        server.process.wait(timeout=30)
        assert not server.running()
    assert server.base_url not in _without_docker("ps").stdout


def test_openenv_serve_in_its_own_process_is_listed_and_openenv_stop_ends_it(
    cli: Callable[..., CliResult],
) -> None:
    port = free_port()
    process = start_child(
        [sys.executable, "-m", "openenv_hub_cli.main", "serve", str(ECHO_ENV), "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_health(url, timeout_s=60)
        listed = json.loads(cli("ps", "--json").out)
        (mine,) = [item for item in listed if item["url"] == url]
        assert mine["runtime"] == "local" and mine["name"] == f"local-{process.pid}"
        assert mine["owner_pid"] == process.pid and mine["source"] == str(ECHO_ENV)
        stopped = cli("stop", mine["name"])
        assert stopped.code == 0 and f"Removed process {mine['name']} (local)" in stopped.out
        process.communicate(timeout=60)
        assert all(item["url"] != url for item in json.loads(cli("ps", "--json").out))
    finally:
        end_child(process)


def test_a_runtime_of_another_package_is_listed_and_stopped_by_its_own_inventory(
    listed_runtime: object, cli: Callable[..., CliResult]
) -> None:
    import listed_runtime as module

    plain = cli("ps")
    assert (
        plain.code == 0 and "http://127.0.0.1:1/one" in plain.out and "listed_runtime" in plain.out
    )
    named = json.loads(cli("ps", "--runtime", "listed_runtime", "--json").out)
    assert [item["name"] for item in named] == ["one", "two"]

    unknown = cli("stop", "--runtime", "listed_runtime", "three")
    assert unknown.code == 1 and "Nothing started by openenv-hub is named three" in unknown.err
    assert module.REMOVED == []
    stopped = cli("stop", "--runtime", "listed_runtime", "two")
    assert stopped.code == 0 and "Removed thing two (listed_runtime)" in stopped.out
    assert module.REMOVED == ["two"]
    assert [
        item["name"] for item in json.loads(cli("ps", "--json", "--runtime", "listed_runtime").out)
    ] == ["one"]


def test_ps_and_stop_name_an_unknown_runtime_and_list_the_known_ones(
    cli: Callable[..., CliResult],
) -> None:
    for command in (["ps"], ["stop", "--all"]):
        result = cli(*command, "--runtime", "dokcer")
        assert result.code == 1
        assert "Unknown runtime 'dokcer' (did you mean 'docker'?)" in result.err, result.err


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--ray", "auto", "--runtime", "docker"], "--ray and --runtime docker name different"),
        (["--jobs", "--runtime", "uv"], "--jobs and --runtime uv name different runtimes"),
    ],
)
def test_serve_takes_one_runtime_ray_and_jobs_being_older_names(
    flags: list[str], said: str, cli: Callable[..., CliResult]
) -> None:
    result = cli("serve", str(ECHO_ENV), *flags)
    assert result.code == 1 and said in result.err, result.err


def test_the_runtime_names_are_listed_without_importing_the_runtimes() -> None:
    """Built-in runtimes are registered as ``"module:Class"`` and imported on first use."""
    code = (
        "import sys\n"
        "from openenv_hub.runtimes import get_runtime, runtime_names\n"
        "assert 'kubernetes' in runtime_names()\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('openenv_hub.runtimes.'))\n"
        "assert 'openenv_hub.runtimes.kubernetes' not in sys.modules, loaded()\n"
        "get_runtime('local')\n"
        "assert 'openenv_hub.runtimes.local' in sys.modules, loaded()\n"
        "assert 'openenv_hub.runtimes.kubernetes' not in sys.modules, loaded()\n"
        "assert 'openenv_hub.runtimes.ray' not in sys.modules, loaded()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr


def test_a_server_record_another_user_wrote_is_not_listed_nor_signalled(
    own_records: Path, cli: Callable[..., CliResult]
) -> None:
    """Threat: someone who can write to the cache folder records a process of theirs choosing
    (with its true start time) so that 'openenv stop --all' sends it SIGTERM."""
    victim = start_child([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        folder = own_records / "servers"
        folder.mkdir(parents=True)
        started = Path(f"/proc/{victim.pid}/stat").read_text().rpartition(")")[2].split()[19]
        planted = folder / f"{victim.pid}.json"
        entry = {"pid": victim.pid, "started": started, "runtime": "local", "url": "http://x"}
        planted.write_text(json.dumps({**entry, "source": "planted", "owner_pid": None}))
        listed = [item["source"] for item in json.loads(cli("ps", "--json").out)]
        assert "planted" in listed  # written by this user: listed
        os.chown(planted, 65534, 65534)  # as if another user (nobody) wrote it
        assert "planted" not in [item["source"] for item in json.loads(cli("ps", "--json").out)]
        cli("stop", "--all")
        assert victim.poll() is None, "the process named by another user's record was signalled"
    finally:
        end_child(victim)


def test_ps_of_a_named_runtime_that_cannot_be_asked_is_an_error_saying_why(
    cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Named, a cluster's inventory that cannot be asked fails the command (not a line)."""
    pytest.importorskip("kubernetes")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    result = cli("ps", "--runtime", "kubernetes")
    assert result.code == 1 and "Traceback" not in result.err
    assert str(tmp_path / "no-kubeconfig") in result.err, result.err
