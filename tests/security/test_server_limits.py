"""The server's bounds hold against slow, stuck, vanished, oversized and malformed requests.

Threats: a client (or many) exhausting threads, memory or session slots; a step that never
returns holding its slot forever; a shutdown that never ends; input that crashes a handler.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from limits_app import CAPACITY, AsyncSlow, Work, make_app
from polling import wait_until
from serving import free_port
from websockets.sync.client import connect

HERE = Path(__file__).resolve().parent


def strict_json(text: str | bytes) -> Any:
    """JSON as RFC 8259 has it: bare NaN or Infinity is an error."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/ws"


def step_frame(**work: Any) -> str:
    return json.dumps({"type": "step", "data": Work(**work).model_dump(exclude={"metadata"})})


def reset(ws: Any) -> Any:
    """Start the socket's episode (a step needs one) and return the socket."""
    ws.send(json.dumps({"type": "reset"}))
    assert strict_json(ws.recv(timeout=10))["type"] == "observation"
    return ws


def vanish(ws: Any) -> None:
    """Drop a connection the way a killed client does: no closing handshake."""
    ws.socket.shutdown(socket.SHUT_RDWR)
    ws.socket.close()


@pytest.fixture
def limits_server() -> Any:
    """limits_app.py in a process of its own, with a 2 s hard step limit."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(HERE / "limits_app.py"), str(port), "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(healthy, timeout_s=30)
    yield process, url
    if process.poll() is None:
        process.kill()
    process.wait(10)
    if process.stdout:
        process.stdout.close()


@pytest.mark.slow
def test_capacity_four_survives_a_flood_stuck_steps_and_sigterm(limits_server: Any) -> None:
    process, url = limits_server
    peaks = {"live_envs": 0, "session_threads": 0}

    def sample() -> None:
        for key, value in httpx.get(f"{url}/test/counts", timeout=5).json().items():
            if key in peaks:
                peaks[key] = max(peaks[key], value)

    # 1. Two hundred slow stateless calls at once: slots are shared, the rest refused at once.
    async def flood() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=200)
        async with httpx.AsyncClient(limits=limits, timeout=60) as client:
            calls = [
                client.post(f"{url}/step", json={"action": {"message": str(i), "seconds": 0.5}})
                for i in range(200)
            ]
            return await asyncio.gather(*calls)

    async def flood_and_sample() -> list[httpx.Response]:
        running = asyncio.ensure_future(flood())
        while not running.done():
            await asyncio.to_thread(sample)
        return await running

    replies = asyncio.run(flood_and_sample())
    statuses = [r.status_code for r in replies]
    assert set(statuses) <= {200, 503} and statuses.count(200) >= CAPACITY
    assert {r.json()["code"] for r in replies if r.status_code == 503} == {"CAPACITY_REACHED"}
    assert peaks["live_envs"] <= CAPACITY and peaks["session_threads"] <= CAPACITY, peaks

    # 2. Four steps that never return, whose clients then vanish: the slots stay taken ...
    with contextlib.ExitStack() as clients:
        for _ in range(CAPACITY):
            ws = reset(clients.enter_context(connect(ws_url(url))))
            ws.send(step_frame(stuck=True))
            vanish(ws)
    with connect(ws_url(url)) as refused:
        assert strict_json(refused.recv(timeout=10))["data"]["code"] == "CAPACITY_REACHED"
    # ... until the hard limit (2 s) abandons their threads; then new sessions are served.
    started = time.monotonic()

    def served() -> bool:
        with connect(ws_url(url)) as ws:
            try:
                refusal = ws.recv(timeout=0.3)  # a full server refuses before any request
            except TimeoutError:
                ws.send(json.dumps({"type": "reset"}))
                return strict_json(ws.recv(timeout=10))["type"] == "observation"
            assert strict_json(refusal)["data"]["code"] == "CAPACITY_REACHED"
            return False

    wait_until(served, timeout_s=15)
    assert time.monotonic() - started < 12
    # One slot free serves; the four stuck calls may pass the hard limit in different ticks.
    wait_until(lambda: httpx.get(f"{url}/health").json().get("abandoned_threads") == CAPACITY)
    sample()
    # Threads: the abandoned ones, plus at most one per slot in use and one kept spare per slot.
    assert peaks["session_threads"] <= CAPACITY + 2 * CAPACITY, peaks

    # 3. SIGTERM while a step is stuck: the process exits within the graceful timeout (5 s).
    with connect(ws_url(url)) as stuck:
        stuck.send(step_frame(stuck=True))
        wait_until(lambda: httpx.get(f"{url}/test/counts").json()["live_envs"] > CAPACITY)
        terminated = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)
        assert time.monotonic() - terminated < 9


def test_an_async_step_is_cancelled_when_its_client_vanishes(serve: Any) -> None:
    server = serve(make_app(AsyncSlow))
    before = AsyncSlow.cancelled
    with connect(ws_url(server.url)) as ws:
        reset(ws).send(step_frame(seconds=60))
        server.wait_for(lambda: server.pool.active_sessions == 1)
        vanish(ws)
        server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)
    assert AsyncSlow.cancelled == before + 1


def test_a_stateless_call_whose_client_left_frees_its_slot(serve: Any) -> None:
    server = serve(make_app(AsyncSlow))
    before = AsyncSlow.cancelled
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.url}/step", json={"action": {"seconds": 60}}, timeout=0.5)
    server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=5)
    assert AsyncSlow.cancelled == before + 1


@pytest.mark.parametrize("name", ["self"])
def test_a_reserved_keyword_is_a_validation_error_naming_it(serve: Any, name: str) -> None:
    server = serve(make_app())
    with connect(ws_url(server.url)) as ws:
        ws.send(json.dumps({"type": "reset", "data": {name: 1}}))
        error = strict_json(ws.recv(timeout=5))["data"]
        assert error["code"] == "VALIDATION_ERROR" and error["errors"][0]["loc"] == [name]
        ws.send(json.dumps({"type": "reset"}))  # the socket still serves
        assert strict_json(ws.recv(timeout=5))["type"] == "observation"
    for path, body in [("/reset", {name: 1}), ("/step", {"action": {}, name: 1})]:
        reply = httpx.post(f"{server.url}{path}", json=body)
        assert reply.status_code == 422 and name in json.dumps(reply.json()), reply.text


def test_names_of_the_core_s_own_parameters_reach_the_environment(serve: Any) -> None:
    server = serve(make_app())
    names = {"session": 1, "fn": 2, "run_async": 3, "kwargs": 4}
    with connect(ws_url(server.url)) as ws:
        ws.send(json.dumps({"type": "reset", "data": names}))
        observation = strict_json(ws.recv(timeout=5))["data"]["observation"]
    assert observation["keywords"] == sorted(names)
    reply = httpx.post(f"{server.url}/reset", json=names)
    assert reply.status_code == 200 and reply.json()["observation"]["keywords"] == sorted(names)


def test_an_oversized_body_is_refused_before_it_is_read(serve: Any) -> None:
    server = serve(make_app())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        head = (
            "POST /step HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {100 * 1024 * 1024}\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"action": {"message": "')  # and nothing more
        answer = sock.recv(65536).decode()
    assert answer.startswith("HTTP/1.1 413")
    assert "16 MB" in answer and "OPENENV_MAX_MESSAGE_SIZE_MB" in answer


def test_one_setting_bounds_http_bodies_and_websocket_frames(serve: Any) -> None:
    server = serve(make_app(max_message_size_mb=1))
    big = "x" * (2 * 1024 * 1024)

    def chunks() -> Any:  # no Content-Length: the limit applies to the bytes as they come
        yield b'{"action": {"message": "'
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536].encode()
        yield b'"}}'

    as_json = {"content-type": "application/json"}
    assert httpx.post(f"{server.url}/step", content=chunks(), headers=as_json).status_code == 413
    small = httpx.post(f"{server.url}/step", json={"action": {"message": "x" * 1000}})
    assert small.status_code == 200
    with connect(ws_url(server.url), max_size=None) as ws:
        ws.send(json.dumps({"type": "step", "data": {"message": big}}))
        with pytest.raises(Exception) as closed:
            ws.recv(timeout=10)
    assert "1009" in str(closed.value)


@pytest.mark.parametrize(
    "body",
    [
        b'{"seed": 1e999}',
        b'{"seed": NaN}',
        b'{"seed": -Infinity}',
        b'{"episode_id": "\\ud800"}',
    ],
    ids=["overflow", "nan", "infinity", "lone-surrogate"],
)
def test_numbers_and_strings_json_cannot_carry_get_422(serve: Any, body: bytes) -> None:
    server = serve(make_app())
    reply = httpx.post(
        f"{server.url}/reset", content=body, headers={"content-type": "application/json"}
    )
    assert reply.status_code == 422
    assert strict_json(reply.content)["detail"][0]["type"] == "json_invalid"
    step = b'{"action": {"message": "\\udfff"}}'
    reply = httpx.post(
        f"{server.url}/step", content=step, headers={"content-type": "application/json"}
    )
    assert reply.status_code == 422 and strict_json(reply.content)


@pytest.mark.parametrize("data", ['{"seed": 1e999}', '{"seed": NaN}', '{"seed": 1.5}'])
def test_the_websocket_answers_bad_numbers_with_valid_json(serve: Any, data: str) -> None:
    server = serve(make_app())
    with connect(ws_url(server.url)) as ws:
        ws.send('{"type": "reset", "data": ' + data + "}")
        reply = strict_json(ws.recv(timeout=5))
    assert reply["type"] == "error"
    assert reply["data"]["code"] in ("INVALID_JSON", "VALIDATION_ERROR")


def test_sigterm_ends_a_server_with_a_stuck_stateless_call(limits_server: Any) -> None:
    process, url = limits_server

    def stuck_call() -> None:
        with contextlib.suppress(httpx.HTTPError):
            httpx.post(f"{url}/step", json={"action": {"stuck": True}}, timeout=30)

    caller = threading.Thread(target=stuck_call)
    caller.start()
    wait_until(lambda: httpx.get(f"{url}/test/counts").json()["live_envs"] == 1)
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    process.wait(15)
    assert time.monotonic() - started < 9
    caller.join(30)


def _socket_from(address: str, port: int) -> socket.socket:
    """A connection to the server on 127.0.0.1 from another loopback address: another client."""
    sock = socket.socket()
    sock.bind((address, 0))
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    return sock


def test_one_client_cannot_hold_every_session(serve: Any) -> None:
    """Threat: one client opens every session slot and locks every other client out. With
    ``max_sessions_per_client``, its share is bounded and the others still get sessions."""
    server = serve(make_app(max_sessions_per_client=2))
    with contextlib.ExitStack() as held:
        for _ in range(2):
            held.enter_context(connect(ws_url(server.url)))
        server.wait_for(lambda: server.pool.active_sessions == 2)
        with connect(ws_url(server.url)) as third:
            refusal = json.loads(third.recv(timeout=10))["data"]
        assert refusal["code"] == "CAPACITY_REACHED"
        assert "Client 127.0.0.1 holds 2 sessions" in refusal["message"]
        assert "max_sessions_per_client=2" in refusal["message"]
        assert "OPENENV_MAX_SESSIONS_PER_CLIENT" in refusal["message"]
        create = {"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}
        over_http = httpx.post(f"{server.url}/mcp", json=create).json()
        assert (
            over_http["error"]["code"] == -32000
            and "holds 2 sessions" in over_http["error"]["message"]
        )
        other = _socket_from("127.0.0.2", server.port)
        with connect(ws_url(server.url), sock=other) as ws:  # another client: served
            ws.send(json.dumps({"type": "reset"}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        transport = httpx.HTTPTransport(local_address="127.0.0.3")
        with httpx.Client(transport=transport) as third_client:
            assert "result" in third_client.post(f"{server.url}/mcp", json=create).json()


def test_the_per_client_share_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_app().state.sessions.max_sessions_per_client is None
    monkeypatch.setenv("OPENENV_MAX_SESSIONS_PER_CLIENT", "3")
    assert make_app().state.sessions.max_sessions_per_client == 3
    assert make_app(max_sessions_per_client=1).state.sessions.max_sessions_per_client == 1
