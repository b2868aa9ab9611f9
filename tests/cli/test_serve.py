"""``openenv serve``: URLs, refusals, and --reload picking up an edit."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from child_processes import end_child, start_child

from openenv_hub.transport.local_ports import free_port


def test_refuses_a_port_in_use(cli: Callable[..., Any], rendered_env: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", rendered_env, "--port", port)
    assert result.code == 1
    assert f"Port {port} on 127.0.0.1 is already in use" in result.err
    assert f"--port {port + 1}" in result.err
    assert "Traceback" not in result.err


def _in_time_wait(port: int) -> bool:
    """Whether a TCP connection of ``port`` on this machine is in TIME_WAIT."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if int(local.rsplit(":", 1)[1], 16) == port and state == "06":
                return True
    return False


def _serve_child(env_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", str(env_dir)]
    with log.open("ab") as output:
        return start_child([*command, "--port", str(port)], stdout=output, stderr=output)


def test_a_port_a_stopped_server_left_in_time_wait_is_served_again_at_once(
    rendered_env: Path, tmp_path: Path
) -> None:
    """A server stopped with a client connected leaves its end of the connection in TIME_WAIT
    for about a minute. uvicorn binds over it (``SO_REUSEADDR``); the check before it refused
    the port all that minute as "already in use"."""
    from openenv_hub.transport.local_ports import wait_for_health

    port, log = free_port(), tmp_path / "serve.log"
    url = f"http://127.0.0.1:{port}"
    first = _serve_child(rendered_env, port, log)
    try:
        wait_for_health(url, timeout_s=60, alive=lambda: first.poll() is None)
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert client.recv(65536).startswith(b"HTTP/1.1 200")  # and the connection stays
            first.send_signal(signal.SIGINT)
            first.wait(30)
            while client.recv(65536):  # the server closed its end first
                pass
    finally:
        end_child(first)
    assert _in_time_wait(port)
    second = _serve_child(rendered_env, port, log)
    try:
        wait_for_health(url, timeout_s=60, alive=lambda: second.poll() is None)
    except Exception:
        raise AssertionError(f"the second server did not start:\n{log.read_text()}") from None
    finally:
        end_child(second)


@pytest.mark.parametrize("port", ["70000", "0", "-1"])
def test_refuses_a_port_out_of_range(
    cli: Callable[..., Any], rendered_env: Path, port: str
) -> None:
    result = cli("serve", rendered_env, "--port", port)
    assert result.code == 2 and "Invalid value for '--port'" in result.err, result.text
    assert "Traceback" not in result.text and "Unexpected error" not in result.text


def test_refuses_an_app_that_does_not_import(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    manifest = root / "openenv.yaml"
    manifest.write_text(
        manifest.read_text().replace("my_env.server.app:app", "my_env.server.nope:app")
    )
    result = cli("serve", root, "--port", free_port())
    assert result.code == 1
    assert "does not import" in result.err and "Traceback" not in result.err


SHADOWED = "'my_env' is the folder {folder} here, not the package my_env/ inside it"


def test_serving_from_the_folder_that_holds_the_env_folder_names_the_shadowing(
    new_env: Callable[[], Path],
) -> None:
    """In the folder that holds ``my_env/``, Python takes that folder for the package."""
    root = new_env()
    command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", "my_env.server.app:app"]
    done = subprocess.run(
        [*command, "--port", str(free_port())], cwd=root.parent, capture_output=True, text=True,
        timeout=120, check=False, env={**os.environ, "COLUMNS": "250"},
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert SHADOWED.format(folder=root) in done.stderr, done.stderr
    assert "Run it inside the folder (cd my_env) or elsewhere, or rename the folder." in done.stderr


def test_the_client_import_from_that_folder_names_the_shadowing_too(
    new_env: Callable[[], Path],
) -> None:
    """``from my_env import MyEnv`` there fails in Python itself; the description says why."""
    root = new_env()
    code = (
        "from openenv_hub.validation.failure import describe_import_failure\n"
        "try:\n    from my_env import MyEnv\n"
        "except ImportError as exc:\n    print(describe_import_failure(exc))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root.parent, capture_output=True, text=True,
        timeout=60, check=True,
    )  # fmt: skip
    assert "cannot import name 'MyEnv' from 'my_env'" in done.stdout
    assert SHADOWED.format(folder=root) in done.stdout, done.stdout


def test_a_syntax_error_is_reported_with_file_and_line_as_validate_does(
    cli: Callable[..., Any], new_env: Callable[[], Path]
) -> None:
    root = new_env()
    broken = root / "my_env" / "server" / "environment.py"
    lines = broken.read_text().splitlines()
    lines[5] = "def broken(:"
    broken.write_text("\n".join(lines) + "\n")
    where = f"({broken}, line 6)"
    for name in [m for m in sys.modules if m.split(".")[0] == "my_env"]:
        del sys.modules[name]  # another test's my_env, imported in this process, would be served
    served = cli("serve", root, "--port", free_port())
    assert served.code == 1 and "Unexpected error" not in served.err
    assert f"does not import: SyntaxError: invalid syntax {where}" in served.err
    assert "def broken(:" in served.err
    validated = cli("validate", root, "--level", "import", "--json")
    assert f"SyntaxError: invalid syntax {where}" in validated.out


def test_refuses_a_folder_without_manifest(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("serve", tmp_path)
    assert result.code == 1
    assert "No openenv.yaml" in result.err and "openenv init" in result.err


def _reply(base_url: str) -> str | None:
    try:
        reply = httpx.post(
            f"{base_url}/step", json={"action": {"message": "hi"}}, timeout=2, trust_env=False
        )
    except httpx.HTTPError:
        return None
    return str(reply.json()["observation"]["echoed_message"]) if reply.status_code == 200 else None


def _poll(base_url: str, expected: str, timeout_s: float) -> str | None:
    deadline, seen = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        seen = _reply(base_url)
        if seen == expected:
            return seen
        time.sleep(0.2)
    return seen


@pytest.mark.slow
def test_reload_picks_up_an_edit(new_env: Callable[[], Path]) -> None:
    root = new_env()
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "openenv_hub_cli.main",
        "serve",
        str(root),
        "--port",
        str(port),
        "--reload",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = start_child(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        assert _poll(base_url, "hi", 30) == "hi"
        code = root / "my_env" / "server" / "environment.py"
        code.write_text(
            code.read_text().replace(
                "echoed_message=action.message,", "echoed_message=action.message.upper(),"
            )
        )
        assert _poll(base_url, "HI", 30) == "HI"
        server.terminate()
        output, _ = server.communicate(timeout=20)
    finally:
        end_child(server, signal.SIGTERM)
    assert f"{base_url}/docs" in output
    assert "UI" in output


@contextlib.contextmanager
def _openenv_serve(*args: str, cwd: Path) -> Iterator[str]:
    """``openenv serve ARGS --port P`` in a child process; yields its URL, stops it after."""
    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import wait_for_health

    port = free_port()
    command = [sys.executable, "-m", "openenv_hub_cli.main", "serve", *args, "--port", str(port)]
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=log)
    server = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        try:
            wait_for_health(server.base_url, timeout_s=60, alive=server.running)
        except Exception:
            raise AssertionError(f"{args} did not serve:\n{server.output()[-3000:]}") from None
        yield server.base_url
    finally:
        server.stop()


def _guess_py(folder: Path) -> Path:
    from doc_blocks import doc_block

    path = folder / "guess.py"
    path.write_text(doc_block("README.md", "write an environment").code, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("spec", "action"),
    [
        ("guess.py", {"number": 42}),
        ("guess.py:app", {"number": 42}),
        ("guess:app", {"number": 42}),
        ("gym:Blackjack-v1", {"action": 0}),
    ],
)
def test_serves_a_file_an_import_path_and_a_gymnasium_id(
    tmp_path: Path, spec: str, action: dict[str, int]
) -> None:
    from openenv_hub import GenericEnvClient

    _guess_py(tmp_path)
    with _openenv_serve(spec, cwd=tmp_path) as url, GenericEnvClient(url).sync() as env:
        env.reset(seed=42)
        step = env.step(action)
    assert step.observation["hint"] == "correct" if spec.startswith("guess") else step.done


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["Blackjack-v1"], ["Path does not exist: Blackjack-v1", "openenv serve gym:Blackjack-v1"]),
        (["guess.py", "--runtime", "docker"], ["--runtime docker serves an environment folder"]),
        (["guess.py", "--ray", "auto"], ["--ray serves an environment folder", "not guess.py"]),
        (["guess.py:nope"], ["'guess:nope' (from guess.py) does not import", "no 'nope'"]),
        (["gym:Blackjack-v1", "--reload"], ["--reload needs a file or a module"]),
        (["README.md"], ["Not a folder or a Python file: README.md"]),
        (["guess.py", "--workers", "2", "--reload"], ["--workers N serves from this machine's"]),
    ],
)
def test_what_cannot_be_served_so_says_what_can(
    cli: Callable[..., Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    words: list[str],
) -> None:
    _guess_py(tmp_path)
    (tmp_path / "README.md").write_text("# notes\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("guess", None)
    result = cli("serve", *args, "--port", free_port())
    assert result.code == 1, result.text
    for word in words:
        assert word in result.err
    assert "Traceback" not in result.err


def test_workers_serve_the_address_from_several_processes(tmp_path: Path) -> None:
    """``--workers 2``: new connections reach both processes, and a session created by one
    request is found by the next ones wherever they land."""
    _guess_py(tmp_path)
    with _openenv_serve("guess.py", "--workers", "2", cwd=tmp_path) as url:
        seen = set()
        for _ in range(24):
            with httpx.Client(timeout=30) as client:
                seen.add(client.get(url + "/health").headers["x-openenv-worker"])
        create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
        key = httpx.post(url + "/mcp", json=create, timeout=30).json()["result"]["session_id"]
        for _ in range(8):
            with httpx.Client(timeout=30, headers={"X-OpenEnv-Session": key}) as client:
                assert client.post(url + "/reset", json={"seed": 42}).status_code == 200
    assert seen == {"0/2", "1/2"}


def test_max_concurrent_envs_is_the_option_and_max_sessions_its_older_name(
    cli: Callable[..., Any],
) -> None:
    """The same name as create_app's, openenv.yaml's and $MAX_CONCURRENT_ENVS; the old spelling
    still parses (a bad value is refused under either name)."""
    assert "--max-concurrent-envs" in cli("serve", "--help").out
    for option in ("--max-concurrent-envs", "--max-sessions"):
        refused = cli("serve", option, "0")
        assert refused.code == 2 and "greater than or equal to 1" in refused.err, refused.err


def test_serves_with_the_young_generation_raised_for_many_sessions(tmp_path: Path) -> None:
    from openenv_hub.transport.uvicorn_serving import YOUNG_GENERATION_THRESHOLD

    probe = Path(__file__).resolve().parents[1] / "gc_probe.py"
    (tmp_path / "gc_probe.py").write_text(probe.read_text(encoding="utf-8"), encoding="utf-8")
    with _openenv_serve("gc_probe.py", cwd=tmp_path) as url:
        reply = httpx.post(f"{url}/reset", json={}, timeout=10)
    assert reply.json()["observation"]["young"] == YOUNG_GENERATION_THRESHOLD


def test_frames_are_bounded_as_the_app_bounds_bodies(tmp_path: Path) -> None:
    """An app made with max_message_size_mb=0.05 refuses a 100 KB WebSocket frame (1009), as it
    does under serve_app, not only a 100 KB HTTP body."""
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    probe = Path(__file__).resolve().parents[1] / "gc_probe.py"
    (tmp_path / "gc_probe.py").write_text(probe.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "small_frames.py").write_text(
        "from gc_probe import Probe, Thresholds\n"
        "from openenv_hub import Action, create_app\n"
        "app = create_app(Probe, Action, Thresholds, max_message_size_mb=0.05)\n",
        encoding="utf-8",
    )
    big = '{"type": "step", "data": {"pad": "' + "x" * 100_000 + '"}}'
    with _openenv_serve("small_frames.py", cwd=tmp_path) as url:
        ws_url = url.replace("http://", "ws://") + "/ws"
        with connect(ws_url, open_timeout=10) as socket:
            socket.send('{"type": "reset", "data": {}}')
            assert '"observation"' in socket.recv(timeout=10)
            socket.send(big)
            with pytest.raises(ConnectionClosed) as closed:
                socket.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
