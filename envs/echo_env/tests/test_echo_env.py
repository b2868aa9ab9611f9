"""Tests of the echo environment: the tools, the HTTP and WebSocket API, the client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from echo_env import CallToolAction, EchoEnv
from echo_env.server.app import app
from fastapi.testclient import TestClient

CALL = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "Hi"}}


def test_http_routes() -> None:
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "healthy"}
        assert {"action", "observation", "state"} <= set(client.get("/schema").json())
        reply = client.post("/step", json={"action": CALL}).json()
        assert reply["observation"]["result"]["data"] == "Hi"
        assert client.post("/step", json={"action": {"foo": 1}}).status_code == 422


def test_websocket_session() -> None:
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"episode_id": "ep-1"}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": CALL})
        assert ws.receive_json()["data"]["observation"]["tool_name"] == "echo_message"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["step_count"] == 1


@pytest.fixture
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def test_client(base_url: str) -> None:
    with EchoEnv(base_url=base_url).sync() as env:
        env.reset()
        result = env.step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"}))
        assert result.observation.result["data"] == "Hi"
        assert env.call_tool("echo_with_length", message="Hi") == {"message": "Hi", "length": 2}
