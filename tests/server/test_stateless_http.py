"""A stateless HTTP ``/reset`` or ``/step`` is one call on its session's thread: the environment
is created, its episode started, called and closed there, with one hand-off from the event loop
(openenv_hub.server.stateless)."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import create_app
from openenv_hub.rubrics import rubric


class Recorded(Typed):
    """Typed, recording each call with the thread it ran on (class-wide, in order)."""

    calls: list[tuple[str, str]] = []

    def __init__(self) -> None:
        super().__init__()
        self.calls.append(("init", threading.current_thread().name))

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Echoed:
        self.calls.append(("reset", threading.current_thread().name))
        return super().reset(seed=seed, episode_id=episode_id, **kw)

    def step(self, action: Message, timeout_s: float | None = None, **kw: Any) -> Echoed:
        self.calls.append(("step", threading.current_thread().name))
        return super().step(action, timeout_s=timeout_s, **kw)

    def close(self) -> None:
        self.calls.append(("close", threading.current_thread().name))


@rubric(range=(0, 10))
def length_score(action: Any) -> float:
    return float(len(getattr(action, "message", "")))


class Scored(Typed):
    """Typed with a rubric: its steps are scored on the loop's side, one call at a time."""

    rubric = length_score


def calls_handed(app: Any) -> int:
    return sum(worker.calls_handed for worker in app.state.sessions.threads.workers)


@pytest.mark.parametrize(
    ("path", "body"), [("/step", {"action": {"message": "hello"}}), ("/reset", {"seed": 1})]
)
def test_a_stateless_call_is_one_hand_off_to_the_thread(
    serve: Any, path: str, body: dict[str, Any]
) -> None:
    app = create_app(Typed, Message, Echoed)
    server = serve(app)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        client.post(path, json=body).raise_for_status()  # the thread is started
        before = calls_handed(app)
        reply = client.post(path, json=body)
    assert reply.status_code == 200, reply.text
    assert calls_handed(app) - before == 1


def test_the_environment_is_created_reset_stepped_and_closed_on_one_thread(serve: Any) -> None:
    server = serve(create_app(Recorded, Message, Echoed))
    Recorded.calls.clear()
    reply = httpx.post(f"{server.url}/step", json={"action": {"message": "hi"}}, timeout=10)
    assert reply.json()["observation"]["echoed_message"] == "hi"
    server.wait_for(lambda: server.pool.active_sessions == 0)
    assert [name for name, _ in Recorded.calls] == ["init", "reset", "step", "close"]
    threads = {thread for _, thread in Recorded.calls}
    assert len(threads) == 1 and threads.pop().startswith("openenv-session-")


def test_a_failing_step_is_a_500_and_its_environment_is_closed(serve: Any) -> None:
    server = serve(create_app(Recorded, Message, Echoed))
    Recorded.calls.clear()
    reply = httpx.post(f"{server.url}/step", json={"action": {"message": "x", "fail": True}})
    assert reply.status_code == 500
    assert reply.json() == {
        "detail": "RuntimeError: asked to fail on 'x'",
        "code": "EXECUTION_ERROR",
    }
    server.wait_for(lambda: server.pool.active_sessions == 0)
    assert [name for name, _ in Recorded.calls] == ["init", "reset", "step", "close"]


def test_a_client_that_leaves_during_a_step_frees_its_slot_once_the_step_returns(
    serve: Any,
) -> None:
    server = serve(create_app(Recorded, Message, Echoed))
    Recorded.calls.clear()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            f"{server.url}/step", json={"action": {"message": "x", "delay_s": 1.0}}, timeout=0.3
        )
    server.wait_for(lambda: server.pool.active_sessions == 0, timeout_s=10)
    assert [name for name, _ in Recorded.calls] == ["init", "reset", "step", "close"]


def test_an_environment_with_a_rubric_is_scored_on_a_stateless_step(serve: Any) -> None:
    app = create_app(Scored, Message, Echoed)
    server = serve(app)
    reply = httpx.post(f"{server.url}/step", json={"action": {"message": "four"}}, timeout=10)
    assert reply.status_code == 200, reply.text
    assert reply.json()["reward"] == 4.0
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_the_step_and_reset_bodies_and_the_session_header_are_documented(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    paths = httpx.get(f"{server.url}/openapi.json", timeout=10).json()["paths"]
    for path, required, field in [("/step", True, "action"), ("/reset", False, "seed")]:
        operation = paths[path]["post"]
        body = operation["requestBody"]
        assert body["required"] is required
        assert field in body["content"]["application/json"]["schema"]["properties"]
        assert [p["name"] for p in operation["parameters"]] == ["X-OpenEnv-Session"]
        reply = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert reply == {"$ref": "#/components/schemas/StepResponse"}


def test_a_stateless_call_stuck_past_the_hard_limit_is_answered_without_waiting_for_it(
    serve: Any,
) -> None:
    server = serve(create_app(Typed, Message, Echoed, step_hard_timeout_s=0.5))
    started = time.monotonic()
    reply = httpx.post(
        f"{server.url}/step", json={"action": {"message": "x", "delay_s": 8.0}}, timeout=20
    )
    assert reply.status_code == 500
    assert time.monotonic() - started < 6.0  # the step itself runs 8 s
    server.wait_for(lambda: server.pool.active_sessions == 0)
    assert server.pool.abandoned_threads == 1
