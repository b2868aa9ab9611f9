"""A session belongs to the client that opened it: another client that reads everything ``/web``
and the watch stream show cannot step, reset, read, fork, join or close it, over HTTP,
WebSocket or MCP.

The attacker here is a second client of a server whose Sessions view is on (a local server).
It reads the watch stream's session ids, then tries each of them (and the keys' shapes) on every
route that names a session. The victim's session must be untouched, and every attempt must get
the answer a session that does not exist gets.
"""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import httpx
import pytest
from echo_env.server.environment import EchoEnvironment
from websockets.sync.client import connect

from openenv_hub import create_app
from openenv_hub.server.session_keys import KEY_BYTES

SESSION_HEADER = "X-OpenEnv-Session"


@pytest.fixture
def server(serve: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("OPENENV_WATCH", raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    return serve(create_app(EchoEnvironment, web=True))


def rpc(url: str, method: str, **params: Any) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
    reply: dict[str, Any] = httpx.post(f"{url}/mcp", json=body, timeout=30).json()
    return reply


def watched_ids(url: str) -> list[str]:
    """The session ids the Sessions view's stream shows to anyone who opens it."""
    with httpx.stream("GET", f"{url}/web/watch", timeout=30) as stream:
        assert stream.status_code == 200
        kind = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "sessions":
                ids: list[str] = json.loads(line.removeprefix("data: "))["ids"]
                return ids
    raise AssertionError("the watch stream sent no sessions table")


def ws_send(ws: Any, message: dict[str, Any]) -> dict[str, Any]:
    ws.send(json.dumps(message))
    reply: dict[str, Any] = json.loads(ws.recv(timeout=30))
    return reply


def assert_refused_as_unknown(url: str, name: str) -> None:
    """Every way of addressing a session by ``name`` gets a nonexistent session's answer."""
    unknown = {"detail": f"Unknown session_id: {name}"}
    headers = {SESSION_HEADER: name}
    for method, route, body in [
        ("POST", "/reset", {}),
        ("POST", "/step", {"action": {"type": "call_tool", "tool_name": "echo_message",
                                      "arguments": {"message": "hijacked"}}}),
        ("GET", "/state", None),
    ]:  # fmt: skip
        reply = httpx.request(method, url + route, json=body, headers=headers, timeout=30)
        assert reply.status_code == 404, (route, reply.text)
        assert reply.json()["detail"] == unknown["detail"]
    for method, params in [
        ("openenv/session/close", {"session_id": name}),
        ("tools/call", {"name": "echo_message", "arguments": {"message": "x"}, "session_id": name}),
        ("tools/list", {"session_id": name}),
        ("openenv/session/restore", {"session_id": name, "snapshot": "anything"}),
    ]:
        error = rpc(url, method, **params)["error"]
        assert (error["code"], error["message"]) == (-32602, f"Unknown session_id: {name}")
    ws_url = url.replace("http", "ws", 1)
    for joined in (
        connect(f"{ws_url}/ws?session_id={name}"),
        connect(f"{ws_url}/ws", additional_headers={SESSION_HEADER: name}),
    ):
        with joined as ws:
            refused = json.loads(ws.recv(timeout=30))
            assert refused["type"] == "error"
            assert refused["data"]["message"] == f"Unknown session_id: {name}"


def test_what_the_watch_shows_grants_nothing_over_http_websocket_or_mcp(server: Any) -> None:
    ws_url = server.url.replace("http", "ws", 1)
    key = rpc(server.url, "openenv/session/create")["result"]["session_id"]
    with connect(f"{ws_url}/ws") as victim:
        ws_send(victim, {"type": "reset", "data": {}})
        ws_send(victim, {"type": "step", "data": {"type": "call_tool", "tool_name":
                         "echo_message", "arguments": {"message": "mine"}}})  # fmt: skip
        httpx.post(f"{server.url}/reset", json={}, headers={SESSION_HEADER: key}, timeout=30)
        shown = watched_ids(server.url)
        assert len(shown) == 2  # the WebSocket's session and the one created over MCP
        assert key not in shown and not any(key in name or name in key for name in shown)
        for name in shown:
            assert_refused_as_unknown(server.url, name)
        # The victims go on as if nothing happened.
        state = ws_send(victim, {"type": "state"})["data"]
        assert state["step_count"] == 1
        reply = httpx.get(f"{server.url}/state", headers={SESSION_HEADER: key}, timeout=30)
        assert reply.status_code == 200 and reply.json()["step_count"] == 0
    assert rpc(server.url, "openenv/session/close", session_id=key)["result"]["closed"] is True


def test_a_session_key_is_long_random_and_dies_with_its_session(server: Any) -> None:
    keys = [rpc(server.url, "openenv/session/create")["result"]["session_id"] for _ in range(4)]
    assert len(set(keys)) == 4
    for key in keys:  # URL-safe base64 of KEY_BYTES random bytes: 256 bits
        assert len(key) == math.ceil(KEY_BYTES * 4 / 3) and KEY_BYTES * 8 >= 128
    rpc(server.url, "openenv/session/close", session_id=keys[0])
    assert_refused_as_unknown(server.url, keys[0])
    for key in keys[1:]:
        rpc(server.url, "openenv/session/close", session_id=key)


def test_close_over_mcp_closes_only_the_callers_own_session(server: Any) -> None:
    """A socket's own session cannot be closed by naming it (its display id), and another
    client's session cannot be closed without its key."""
    ws_url = server.url.replace("http", "ws", 1)
    with connect(f"{ws_url}/ws") as victim, connect(f"{ws_url}/ws") as attacker:
        ws_send(victim, {"type": "reset", "data": {}})
        (victim_id,) = set(watched_ids(server.url)) - {
            ws_send(attacker, {"type": "mcp", "data": {"jsonrpc": "2.0", "id": 1,
                    "method": "openenv/session/create"}})["data"]["result"]["session_id"]
        }  # fmt: skip
        closing = {"jsonrpc": "2.0", "id": 2, "method": "openenv/session/close",
                   "params": {"session_id": victim_id}}  # fmt: skip
        error = ws_send(attacker, {"type": "mcp", "data": closing})["data"]["error"]
        assert error["message"] == f"Unknown session_id: {victim_id}"
        assert ws_send(victim, {"type": "state"})["type"] == "state"


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_keys_stay_out_of_the_servers_logs(serve: Any) -> None:
    """OpenEnv's clients join a session with ``/ws?session_id=KEY``, and uvicorn logs the path
    (in its access log, and in the line saying a WebSocket was accepted)."""
    from uvicorn.logging import AccessFormatter

    server = serve(create_app(EchoEnvironment), log_level="info")
    key = rpc(server.url, "openenv/session/create")["result"]["session_id"]
    ws_url = server.url.replace("http", "ws", 1)
    handlers = {"uvicorn.access": _Lines(), "uvicorn.error": _Lines()}
    handlers["uvicorn.access"].setFormatter(AccessFormatter(use_colors=False))
    for name, handler in handlers.items():
        logging.getLogger(name).addHandler(handler)
    try:
        with connect(f"{ws_url}/ws?session_id={key}") as ws:
            assert ws_send(ws, {"type": "reset", "data": {}})["type"] == "observation"
        httpx.get(f"{server.url}/health?session_id={key}", timeout=30)
    finally:
        for name, handler in handlers.items():
            logging.getLogger(name).removeHandler(handler)
    logged = [line for handler in handlers.values() for line in handler.lines]
    assert sum("session_id=[redacted]" in line for line in logged) >= 2, logged
    assert not any(key in line for line in logged), logged
