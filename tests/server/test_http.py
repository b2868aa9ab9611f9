"""HTTP routes, with the bodies of OpenEnv's worked examples."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sample_envs import Broken, Echoed, Message, Typed, WithRichState, failing_factory

from openenv_hub import CallToolAction, CallToolObservation, create_app


@pytest.fixture
def echo(echo_server: Any) -> httpx.Client:
    with httpx.Client(base_url=echo_server.url, timeout=10) as client:
        yield client


def typed_client(serve: Any, factory: Any = Typed, **options: Any) -> httpx.Client:
    server = serve(create_app(factory, Message, Echoed, **options))
    return httpx.Client(base_url=server.url, timeout=10)


def test_health_metadata_schema(echo: httpx.Client) -> None:
    assert echo.get("/health").json() == {"status": "healthy"}
    meta = echo.get("/metadata").json()
    assert set(meta) == {
        "name",
        "description",
        "readme_content",
        "version",
        "author",
        "documentation_url",
        "reward_range",  # ours; OpenEnv's validator asks only for a name and a description
    }
    assert meta["name"] == "echo_env" and meta["reward_range"] == [0.0, 1.0]
    schema = echo.get("/schema").json()
    assert set(schema) == {"action", "observation", "state", "reset_observation"}
    assert schema["action"]["properties"]["tool_name"]["type"] == "string"
    assert schema["action"]["additionalProperties"] is False


@pytest.mark.parametrize("body", [None, {}, {"seed": 42, "episode_id": "ep-1", "foo": 1}])
def test_echo_reset(echo: httpx.Client, body: Any) -> None:
    response = echo.post("/reset", json=body) if body is not None else echo.post("/reset")
    assert response.status_code == 200
    assert response.json() == {
        "observation": {"metadata": {"status": "ready"}},
        "reward": 0.0,
        "done": False,
        "metadata": {"status": "ready"},
    }


def test_echo_list_tools(echo: httpx.Client) -> None:
    body = echo.post("/step", json={"action": {"type": "list_tools"}}).json()
    assert body["reward"] == 0.0 and body["done"] is False  # the echo rubric: no tool called
    tools = body["observation"]["tools"]
    assert [t["name"] for t in tools] == ["echo_message", "echo_with_length"]
    assert tools[0]["description"].startswith("Echo back the provided message.")
    assert tools[0]["input_schema"] == {
        "additionalProperties": False,
        "properties": {"message": {"type": "string"}},
        "required": ["message"],
        "type": "object",
    }


def test_echo_call_tool(echo: httpx.Client) -> None:
    action = {"type": "call_tool", "tool_name": "echo_message", "arguments": {"message": "Hi"}}
    breakdown = {"reward_breakdown": {"tool_succeeded": 1.0, "message_length": 2 / 32}}
    assert echo.post("/step", json={"action": action}).json() == {
        "observation": {
            "metadata": breakdown,
            "tool_name": "echo_message",
            "result": {
                "content": [{"type": "text", "text": "Hi", "annotations": None, "meta": None}],
                "structured_content": {"result": "Hi"},
                "meta": None,
                "data": "Hi",
                "is_error": False,
            },
            "error": None,
        },
        "reward": 0.5 + 0.5 * 2 / 32,  # the echo rubric: half for success, half for length
        "done": False,
        "metadata": breakdown,
    }
    action = {
        "type": "call_tool",
        "tool_name": "echo_with_length",
        "arguments": {"message": "Test"},
    }
    result = echo.post("/step", json={"action": action}).json()["observation"]["result"]
    assert result["content"][0]["text"] == '{"message":"Test","length":4}'
    assert result["structured_content"] == result["data"] == {"message": "Test", "length": 4}


@pytest.mark.parametrize(
    ("arguments", "tool", "error_type"),
    [
        ({}, "nope", "tool_not_found"),
        ({}, "echo_message", "invalid_args"),
        ({"message": 1}, "echo_message", "invalid_args"),
    ],
)
def test_echo_tool_errors(
    echo: httpx.Client, arguments: dict[str, Any], tool: str, error_type: str
) -> None:
    action = {"type": "call_tool", "tool_name": tool, "arguments": arguments}
    observation = echo.post("/step", json={"action": action}).json()["observation"]
    assert observation["result"] is None
    assert observation["error"]["error_type"] == error_type
    if tool == "nope":
        assert observation["error"]["message"] == "Unknown tool: 'nope'"


def test_action_validation_is_422_relative_to_the_action(echo: httpx.Client) -> None:
    response = echo.post("/step", json={"action": {"foo": 1}})
    assert response.status_code == 422
    errors = response.json()["detail"]
    assert {(e["type"], tuple(e["loc"])) for e in errors} == {
        ("missing", ("tool_name",)),
        ("extra_forbidden", ("foo",)),
    }


@pytest.mark.parametrize(
    ("body", "loc"),
    [({}, ["body", "action"]), ({"action": {}, "timeout_s": 0}, ["body", "timeout_s"])],
)
def test_envelope_validation(echo: httpx.Client, body: dict[str, Any], loc: list[str]) -> None:
    response = echo.post("/step", json=body)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == loc


def test_reset_envelope_validation(echo: httpx.Client) -> None:
    response = echo.post("/reset", json={"seed": -1})
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "greater_than_equal"
    bad_json = echo.post(
        "/reset", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert bad_json.status_code == 422
    assert bad_json.json()["detail"][0]["type"] == "json_invalid"


def test_http_is_stateless_by_default(echo: httpx.Client) -> None:
    first, second = echo.get("/state").json(), echo.get("/state").json()
    assert first["step_count"] == 0 and first["episode_id"] != second["episode_id"]


def test_typed_env_worked_example(serve: Any) -> None:
    with typed_client(serve) as client:
        reset = client.post("/reset").json()
        assert reset["observation"]["echoed_message"] == "ready"
        step = client.post("/step", json={"action": {"message": "hello"}}).json()
        assert step["observation"]["echoed_message"] == "hello"
        assert step["observation"]["message_length"] == 5
        assert step["reward"] == pytest.approx(0.5) and step["done"] is False


def test_session_header_makes_http_stateful(serve: Any) -> None:
    with typed_client(serve) as client:
        session_id = client.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1}
        ).json()["result"]["session_id"]
        headers = {"X-OpenEnv-Session": session_id}
        client.post("/reset", json={"episode_id": "http-ep"}, headers=headers)
        client.post("/step", json={"action": {"message": "a"}}, headers=headers)
        client.post("/step", json={"action": {"message": "b"}}, headers=headers)
        assert client.get("/state", headers=headers).json() == {
            "episode_id": "http-ep",
            "step_count": 2,
        }
        missing = client.get("/state", headers={"X-OpenEnv-Session": "nope"})
        assert missing.status_code == 404 and "Unknown session_id: nope" in missing.json()["detail"]


def test_state_keeps_subclass_fields(serve: Any) -> None:
    with typed_client(serve, WithRichState) as client:
        assert client.get("/state").json() == {"episode_id": "rich", "step_count": 1, "score": 7}


def test_environment_exception_is_a_json_500(serve: Any) -> None:
    with typed_client(serve, Broken) as client:
        response = client.post("/reset")
        assert response.status_code == 500
        assert response.json() == {
            "detail": "ValueError: reset is broken",
            "code": "EXECUTION_ERROR",
        }
        assert client.get("/health").status_code == 200


def test_factory_failure_is_a_json_500(serve: Any) -> None:
    with typed_client(serve, failing_factory) as client:
        response = client.post("/reset")
        assert response.status_code == 500
        body = response.json()
        assert body["code"] == "FACTORY_ERROR" and "no GPU today" in body["detail"]


def test_openapi_paths_match_simulation_mode(echo: httpx.Client) -> None:
    spec = echo.get("/openapi.json").json()
    assert spec["info"]["version"].startswith("1.")
    assert {"/reset", "/step", "/state", "/health", "/schema", "/metadata", "/mcp"} <= set(
        spec["paths"]
    )


def test_create_app_rejects_an_instance() -> None:
    from openenv_hub.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="Pass the class itself"):
        create_app(Typed(), Message, Echoed)  # type: ignore[arg-type]


def test_call_tool_action_app_accepts_list_tools() -> None:
    app = create_app(Typed, CallToolAction, CallToolObservation)
    assert app.state.sessions.parse_action({"type": "list_tools"}).type == "list_tools"


def test_observation_metadata_travels_inside_and_on_top(serve: Any) -> None:
    from openenv_hub import Environment, Observation, State

    class Noted(Environment[Message, Echoed, State]):
        def reset(self, **kwargs: Any) -> Echoed:
            return Echoed(metadata={"status": "ready"})

        def step(self, action: Message, **kwargs: Any) -> Echoed:
            return Echoed(echoed_message=action.message)

        @property
        def state(self) -> State:
            return State()

    assert Observation  # the base model is what Echoed extends
    with typed_client(serve, Noted) as client:
        reset = client.post("/reset").json()
        assert reset["observation"]["metadata"] == reset["metadata"] == {"status": "ready"}
        step = client.post("/step", json={"action": {"message": "m"}}).json()
        assert step["observation"]["metadata"] == {} and step["metadata"] is None


def test_production_mode_leaves_out_the_episode_routes(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openenv_hub.errors import ConfigurationError

    with typed_client(serve, mode="production") as client:
        assert client.post("/reset").status_code == 404
        assert client.get("/state").status_code == 404
        assert client.get("/health").status_code == 200
        assert "/reset" not in client.get("/openapi.json").json()["paths"]
    monkeypatch.setenv("OPENENV_MODE", "Production")
    assert "/step" not in create_app(Typed, Message, Echoed).openapi()["paths"]
    with pytest.raises(ConfigurationError, match="Invalid mode: 'staging'"):
        create_app(Typed, Message, Echoed, mode="staging")


class Tasks(Typed):
    def list_splits(self) -> list[str]:
        return ["train", "dev"]

    async def num_tasks(self, split: str) -> int:
        return 3

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return {"split": split, "question": ["a", "b", "c"][index]}


def test_task_api(serve: Any) -> None:
    with typed_client(serve, Tasks, env_name="quiz") as client:
        assert client.get("/list_environments").json() == ["quiz"]
        assert client.get("/quiz/splits").json() == [
            {"name": "train", "type": "train"},
            {"name": "dev", "type": "validation"},
        ]
        assert client.post("/Quiz/num_tasks", json={"split": "train"}).json() == {"num_tasks": 3}
        assert client.post("/quiz/task", json={"split": "train", "index": 1}).json() == {
            "task": {"split": "train", "question": "b"}
        }
        assert client.post("/quiz/task", json={"split": "train", "index": 9}).status_code == 400
        unsupported = client.post("/quiz/tasks", json={"split": "train"})
        assert (
            unsupported.status_code == 501
            and unsupported.json()["detail"] == "list_tasks is not supported for this environment"
        )
        assert client.get("/other/splits").status_code == 404
        assert client.post("/quiz/task", json={"index": 1}).status_code == 422
