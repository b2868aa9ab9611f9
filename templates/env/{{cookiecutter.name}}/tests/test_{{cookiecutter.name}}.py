"""Tests of the {{ cookiecutter.title }} environment: the logic, the HTTP and WebSocket API, the client."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi.testclient import TestClient

from {{ cookiecutter.name }} import {{ cookiecutter.class_prefix }}Action, {{ cookiecutter.class_prefix }}Env
from {{ cookiecutter.name }}.server.app import app
from {{ cookiecutter.name }}.server.environment import {{ cookiecutter.class_prefix }}Environment


def test_step_echoes_the_message_and_rewards_its_length() -> None:
    env = {{ cookiecutter.class_prefix }}Environment()
    env.reset()
    observation = env.step({{ cookiecutter.class_prefix }}Action(message="hello"))
    assert observation.echoed_message == "hello"
    assert observation.message_length == 5
    assert observation.reward == pytest.approx(0.5)
    assert env.state.step_count == 1


def test_http_routes() -> None:
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "healthy"}
        assert {"action", "observation", "state"} <= set(client.get("/schema").json())
        reply = client.post("/step", json={"action": {"message": "hi"}}).json()
        assert reply["observation"]["echoed_message"] == "hi"
        assert reply["observation"]["message_length"] == 2
        assert reply["reward"] == pytest.approx(0.2)
        assert client.post("/step", json={"action": {}}).status_code == 422


def test_websocket_session() -> None:
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"episode_id": "ep-1"}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "step", "data": {"message": "abc"}})
        assert ws.receive_json()["data"]["observation"]["message_length"] == 3
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"] == {"episode_id": "ep-1", "step_count": 1}


def test_a_step_before_reset_is_refused() -> None:
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "step", "data": {"message": "abc"}})
        error = ws.receive_json()["data"]
        assert error["reason"] == "reset_required" and "call reset() first" in error["message"]
        assert client.get("/metadata").json()["reward_range"] == [0.0, None]


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
    with {{ cookiecutter.class_prefix }}Env(base_url=base_url).sync() as env:
        env.reset()
        result = env.step({{ cookiecutter.class_prefix }}Action(message="hello"))
        assert result.observation.echoed_message == "hello"
        assert result.reward == pytest.approx(0.5)
        assert env.state().step_count == 1
