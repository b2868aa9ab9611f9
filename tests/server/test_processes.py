"""A server of several processes behind one address (``serve_app(app, workers=N)``): a WebSocket
session stays in the process that accepted it, a request naming a session reaches the process
that holds it whichever process accepts its connection, the web UI is process 0's, and the
server stops whole, leaving no process and no socket behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from child_processes import end_child, start_child
from polling import wait_until
from serving import free_port
from starlette.types import Receive, Scope, Send
from websockets.sync.client import connect

from openenv_hub import serve_app
from openenv_hub.errors import ConfigurationError
from openenv_hub.server.process_routing import ProcessRouter, owner_of

TYPED = Path(__file__).resolve().parents[2] / "benchmarks" / "servers" / "typed.py"
RESET = json.dumps({"type": "reset", "data": {}})
STEP = json.dumps({"type": "step", "data": {"message": "hello"}})
FRESH = 24  # requests on new connections: all on one process by chance is 2 ** -24


def _start(workers: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = start_child(
        [sys.executable, str(TYPED), "--port", str(port), "--workers", str(workers)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert process.poll() is None, process.communicate()[0].decode()
        try:
            return httpx.get(url + "/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, 60, "the server answers /health")
    return process, url


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    process, url = _start(2)
    try:
        yield url
    finally:
        end_child(process)


def _fresh(method: str, url: str, **options: object) -> httpx.Response:
    """One request on a connection of its own (a new connection may reach either process)."""
    with httpx.Client(timeout=30) as client:
        return client.request(method, url, **options)  # type: ignore[arg-type]


def _create(url: str) -> str:
    body = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    key: str = _fresh("POST", url + "/mcp", json=body).json()["result"]["session_id"]
    return key


def test_both_processes_accept_connections(server: str) -> None:
    seen = {_fresh("GET", server + "/health").headers["x-openenv-worker"] for _ in range(FRESH)}
    assert seen == {"0/2", "1/2"}


def test_a_websocket_session_keeps_stepping_in_the_process_that_accepted_it(server: str) -> None:
    ws_url = server.replace("http", "ws", 1) + "/ws"
    seen = set()
    for _ in range(12):
        with connect(ws_url) as ws:
            assert ws.response is not None
            seen.add(ws.response.headers["x-openenv-worker"])
            ws.send(RESET)
            assert json.loads(ws.recv())["type"] == "observation"
            counts = []
            for _ in range(10):
                ws.send(STEP)
                counts.append(json.loads(ws.recv())["data"]["observation"]["metadata"]["step"])
            assert counts == list(range(1, 11))  # one environment, in one process, all along
    assert seen == {"0/2", "1/2"}


def test_an_http_session_is_found_whatever_process_accepts_the_request(server: str) -> None:
    key = _create(server)
    assert owner_of(key, 2) in (0, 1)
    header = {"X-OpenEnv-Session": key}
    assert _fresh("POST", server + "/reset", json={}, headers=header).status_code == 200
    counts = []
    for _ in range(FRESH):
        answer = _fresh("POST", server + "/step", json={"action": {"message": "hi"}},
                        headers=header)  # fmt: skip
        assert answer.status_code == 200, answer.text
        assert answer.headers["x-openenv-worker"] == f"{owner_of(key, 2)}/2"
        counts.append(answer.json()["observation"]["metadata"]["step"])
    assert counts == list(range(1, FRESH + 1))


def test_a_session_named_in_json_rpc_is_closed_in_its_process(server: str) -> None:
    keys = [_create(server) for _ in range(6)]
    assert {owner_of(key, 2) for key in keys} == {0, 1}
    for key in keys:
        close = {"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close",
                 "params": {"session_id": key}}  # fmt: skip
        answer = _fresh("POST", server + "/mcp", json=close).json()
        assert answer["result"] == {"session_id": key, "closed": True}, answer
        again = _fresh("POST", server + "/mcp", json=close).json()
        assert "error" in again, again


def test_a_websocket_joins_an_http_session_held_by_either_process(server: str) -> None:
    ws_url = server.replace("http", "ws", 1) + "/ws"
    for joined_by in ["header", "query"] * 4:
        key = _create(server)
        if joined_by == "header":
            socket = connect(ws_url, additional_headers={"X-OpenEnv-Session": key})
        else:
            socket = connect(f"{ws_url}?session_id={key}")
        with socket as ws:
            ws.send(RESET)
            assert json.loads(ws.recv())["type"] == "observation"
            ws.send(STEP)
            stepped = json.loads(ws.recv())
            assert stepped["data"]["observation"]["metadata"]["step"] == 1, stepped
        answer = _fresh("GET", server + "/state", headers={"X-OpenEnv-Session": key})
        assert answer.json()["step_count"] == 1, answer.text


def test_a_made_up_process_index_is_an_unknown_key(server: str) -> None:
    for key in ["1.not-a-key", "0.not-a-key", "7.not-a-key", "x.not-a-key"]:
        answer = _fresh("POST", server + "/step", json={"action": {"message": "hi"}},
                        headers={"X-OpenEnv-Session": key})  # fmt: skip
        assert answer.status_code == 404, answer.text


def test_the_web_ui_and_the_sessions_view_are_process_zeros(server: str) -> None:
    served = {_fresh("GET", server + "/web/").headers["x-openenv-worker"] for _ in range(FRESH)}
    assert served == {"0/2"}


def test_keys_name_their_process_and_made_up_indices_name_none() -> None:
    assert owner_of("1.abc", 2) == 1
    assert owner_of("0.abc", 2) == 0
    assert owner_of("2.abc", 2) is None  # no such process
    assert owner_of("abc", 2) is None  # a key of a server of one process
    assert owner_of("\u0663.abc", 4) is None  # a digit, not an ASCII one
    assert owner_of("0001.abc", 4) is None


def test_the_server_stops_whole_on_sigterm() -> None:
    process, _ = _start(2)
    try:
        pids = _children(process.pid)
        assert len(pids) == 2
        folders_before = _private_folders()
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()]
        assert _private_folders() <= folders_before
    finally:
        end_child(process)


def test_a_process_that_ends_stops_the_server_with_an_error() -> None:
    process, _ = _start(2)
    try:
        first, second = _children(process.pid)
        os.kill(first, signal.SIGKILL)
        assert process.wait(30) == 1
        wait_until(lambda: not Path(f"/proc/{second}").exists(), 10, "the other process ended")
        assert b"ended with status -9; stopping the others" in process.communicate()[0]
    finally:
        end_child(process)


def test_workers_out_of_range_and_with_reload_are_refused_by_name() -> None:
    with pytest.raises(ConfigurationError, match="workers=0: give a whole number from 1 to 64"):
        serve_app("pkg:app", workers=0)
    with pytest.raises(ConfigurationError, match="reload=True serves from one process"):
        serve_app("pkg:app", workers=2, reload=True)


def test_a_port_in_use_is_refused_by_name(server: str) -> None:
    port = int(server.rsplit(":", 1)[1])
    run = subprocess.run(
        [sys.executable, str(TYPED), "--port", str(port), "--workers", "2"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in run.stderr and "pick another port" in run.stderr


def _children(pid: int) -> list[int]:
    def listed() -> list[int]:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        return [int(child) for child in text.split()]

    wait_until(lambda: len(listed()) == 2, 10, "two server processes")
    return listed()


def _private_folders() -> set[str]:
    import tempfile

    return {p.name for p in Path(tempfile.gettempdir()).glob("openenv-workers-*")}


async def _client_seen(scope: Scope, receive: Receive, send: Send) -> None:
    body = json.dumps(scope.get("client")).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def test_a_client_cannot_pass_for_another_by_the_relay_header() -> None:
    """Only a request that came over a process's private socket is given the client the passing
    process named; over TCP the header changes nothing."""
    router = ProcessRouter(_client_seen, index=0, paths=["/nonexistent/0.sock", "/x/1.sock"])
    transport = httpx.ASGITransport(app=router, client=("203.0.113.7", 4242))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        answer = await client.get("/", headers={"X-OpenEnv-Relayed-Client": "127.0.0.1:1"})
    assert answer.json() == ["203.0.113.7", 4242]
    assert answer.headers["x-openenv-worker"] == "0/2"


def test_the_server_command_takes_workers_and_refuses_a_bad_number_by_name() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "openenv_hub.server", "nowhere:app", "--workers", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 1
    assert "workers=0: give a whole number from 1 to 64" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_sessions_tab_says_whose_sessions_it_shows() -> None:
    """In process 1 of 3 the tab names it; in a server of one process it says nothing."""
    pytest.importorskip("gradio")
    script = (
        "from openenv_hub.server import processes\n"
        "from openenv_hub.ui.sessions_tab import processes_note\n"
        "assert processes_note() == ''\n"
        "processes._This.value = (1, 3)\n"
        "print(processes_note())\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True)  # fmt: skip
    assert "runs 3 processes" in run.stdout and "of process 1 only" in run.stdout


WEB_APP = """
import sys
sys.path.insert(0, {servers!r})
from typed import EchoedObservation, MessageAction, TypedEcho
from openenv_hub import create_app, serve_app
app = create_app(TypedEcho, MessageAction, EchoedObservation, env_name="typed_echo", web=True)
serve_app(app, port={port}, workers=2, log_level="warning")
"""


def test_the_web_ui_of_a_server_of_several_processes_says_whose_sessions_it_shows(
    tmp_path: Path,
) -> None:
    pytest.importorskip("gradio")
    port = free_port()
    script = tmp_path / "web_app.py"
    script.write_text(WEB_APP.format(servers=str(TYPED.parent), port=port), encoding="utf-8")
    process = start_child([sys.executable, str(script)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            assert process.poll() is None, process.communicate()[0].decode()
            try:
                return httpx.get(url + "/web/config", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, 120, "the web UI answers")
        for _ in range(6):  # whichever process accepts: the UI is process 0's
            answer = _fresh("GET", url + "/web/config")
            assert answer.headers["x-openenv-worker"] == "0/2"
            assert "this tab shows those of process 0 only" in answer.text
    finally:
        end_child(process)
