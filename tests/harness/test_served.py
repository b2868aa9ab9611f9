"""A harness environment is served, recorded, watched and evaluated like any environment:
``create_app`` over ``HarnessEnvironment.factory``, a client's turns over the WebSocket, the
episodes in the trajectory file and ``GET /episodes``, the session in the Sessions view's
stream, and ``openenv eval`` playing its tasks (here with the scripted harness and the fake
engine)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support.fake_engine import create_fake_engine
from scripted import ScriptedAdapter

from openenv_hub import create_app
from openenv_hub.capture import CaptureProxy
from openenv_hub.client import GenericEnvClient
from openenv_hub.harness import HarnessEnvironment, read_tasks
from openenv_hub.trajectories import read_records

pytestmark = pytest.mark.timeout(240)

POLICY = '''
def relay(messages, tools, seed):
    """Hand the task to the harness: one turn whose message is the task's prompt."""
    prompt = messages[-1]["content"].split("\\n\\n")[0]
    return {"tool_calls": [{"name": tools[0]["function"]["name"], "arguments": {"message": prompt}}]}
'''


@pytest.fixture
def served(serve: Callable[..., Any], tmp_path: Path) -> Any:
    engine = serve(create_fake_engine())
    proxy = CaptureProxy(engine_url=f"{engine.url}/v1", model="fake").start()
    for name in ("write-hello", "write-hello-again"):
        task = tmp_path / "tasks" / name
        (task / "tests").mkdir(parents=True)
        (task / "instruction.md").write_text("Write hello.txt with the line hello in it.\n")
        (task / "tests" / "test.sh").write_text("grep -qx hello /workspace/hello.txt\n")
    factory = HarnessEnvironment.factory(
        lambda: ScriptedAdapter(tmp_path / "script", calls=1),
        proxy=proxy,
        tasks=read_tasks(tmp_path / "tasks"),
    )
    app = create_app(factory, trajectories=tmp_path / "episodes.jsonl", web=True, watch=True)
    server = serve(app)
    server.engine = engine  # its .app.state switches the engine's answers
    yield server
    proxy.stop()


async def test_a_client_plays_turns_and_the_server_records_and_shows_them(
    served: Any, tmp_path: Path
) -> None:
    async with GenericEnvClient(served.url) as env:
        first = await env.reset(task_id="write-hello")
        assert first.observation["instruction"].startswith("Write hello.txt")
        result = await env.step({"message": "Write hello.txt with the line hello in it."})
        assert result.reward == 1.0 and result.observation["passed"] is True
        assert result.observation["model_calls"] == 1
        kinds = [e["type"] for e in result.observation["turn_events"]]
        assert kinds[-1] == "turn_complete" and "llm_request" in kinds
        async with (
            httpx.AsyncClient(timeout=30) as http,
            http.stream("GET", f"{served.url}/web/watch") as stream,
        ):
            assert stream.status_code == 200
            event = await _first_event(stream, "sessions")
        assert len(event["rows"]) == 1 and event["rows"][0][3] == 1  # one session, one step
    # The session's end ended its episode: in the trajectory file and in GET /episodes.
    async with httpx.AsyncClient(timeout=30) as http:
        [episode] = (await http.get(f"{served.url}/episodes")).json()["episodes"]
    recorded = read_records(tmp_path / "episodes.jsonl")
    for rows in (episode, recorded):
        assert [r["step"] for r in rows] == [0, 1] and rows[1]["reward"] == 1.0
        assert json.loads(rows[1]["observation"])["passed"] is True


def test_openenv_eval_plays_its_tasks(
    served: Any, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "relay.py").write_text(POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("relay", None)
    output = tmp_path / "results"
    done = cli("eval", served.url, "--policy", "relay:relay", "--max-turns", "1", "-o", output)
    assert done.code == 0, done.out + done.err
    rows = [json.loads(line) for line in (output / "rollouts.jsonl").read_text().splitlines()]
    assert sorted(r["task_key"] for r in rows) == ["write-hello", "write-hello-again"]
    assert all(r["return"] == 1.0 and r["passed"] and r["error"] is None for r in rows)


def test_openenv_eval_counts_an_engine_outage_as_an_error_not_an_answer(
    served: Any, tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "relay.py").write_text(POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("relay", None)
    served.engine.app.state.status = 503
    output = tmp_path / "results"
    args = ("--policy", "relay:relay", "--max-turns", "1", "--max-retries", "0", "-o", output)
    cli("eval", served.url, *args)
    rows = [json.loads(line) for line in (output / "rollouts.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:  # rows to run again, not wrong answers
        assert (row["finish"], row["error_kind"], row["return"]) == ("error", "environment", None)
        assert "ModelEngineError" in row["error"] and "model engine failed" in row["error"]


async def _first_event(stream: httpx.Response, kind: str) -> dict[str, Any]:
    name = None
    async for line in stream.aiter_lines():
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and name == kind:
            return json.loads(line.split(":", 1)[1])
    raise AssertionError(f"no {kind} event")
