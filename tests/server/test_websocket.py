"""The /ws socket: OpenEnv's frames, and every bad input answered with the server still up."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import pytest
from sample_envs import Broken, Echoed, Message, Typed, failing_factory
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from openenv_hub import Environment, State, create_app


def ws(server: Any, path: str = "/ws", **kwargs: Any) -> Any:
    return connect(server.url.replace("http", "ws") + path, open_timeout=5, **kwargs)


def ask(socket: Any, message: Any) -> dict[str, Any]:
    socket.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return json.loads(socket.recv(timeout=5))


def test_echo_transcript(echo_server: Any) -> None:
    with ws(echo_server) as s:
        assert ask(
            s, {"type": "reset", "data": {"episode_id": "ep-42", "seed": 1, "bogus": 2}}
        ) == {
            "type": "observation",
            "data": {
                "observation": {"metadata": {"status": "ready"}},
                "reward": 0.0,
                "done": False,
                "metadata": {"status": "ready"},
            },
        }
        assert ask(s, {"type": "state"}) == {
            "type": "state",
            "data": {
                "episode_id": "ep-42",
                "step_count": 0,
                "rewards": {"episode_return": 0.0, "step_rewards": [], "last_breakdown": {}},
            },
        }
        tools = ask(s, {"type": "step", "data": {"type": "list_tools"}})["data"]["observation"][
            "tools"
        ]
        assert [t["name"] for t in tools] == ["echo_message", "echo_with_length"]
        reply = ask(
            s,
            {
                "type": "step",
                "data": {
                    "type": "call_tool",
                    "tool_name": "echo_message",
                    "arguments": {"message": "Hello"},
                },
            },
        )
        assert reply["data"]["observation"]["result"]["data"] == "Hello"
        rewards = {  # the echo rubric's account of the episode: list_tools, then a call
            "episode_return": 0.5 + 0.5 * 5 / 32,
            "step_rewards": [0.0, 0.5 + 0.5 * 5 / 32],
            "last_breakdown": {"tool_succeeded": 1.0, "message_length": 5 / 32},
        }
        assert ask(s, {"type": "state"})["data"] == {
            "episode_id": "ep-42",
            "step_count": 2,
            "rewards": rewards,
        }
        mcp = ask(
            s,
            {
                "type": "mcp",
                "data": {
                    "jsonrpc": "2.0",
                    "method": "tools/call",
                    "params": {"name": "echo_message", "arguments": {"message": "via mcp"}},
                    "id": 11,
                },
            },
        )
        assert mcp["type"] == "mcp" and mcp["data"]["id"] == 11
        assert mcp["data"]["result"]["structured_content"] == {"result": "via mcp"}
        s.send(json.dumps({"type": "close"}))
        with pytest.raises(ConnectionClosed) as closed:
            s.recv(timeout=5)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000


@pytest.mark.parametrize(
    ("frame", "code", "message"),
    [
        ("not json", "INVALID_JSON", "Invalid JSON"),
        ({"type": "bogus"}, "UNKNOWN_TYPE", "Unknown message type: bogus"),
        ({"data": {}}, "UNKNOWN_TYPE", "Unknown message type: "),
        ([1, 2], "UNKNOWN_TYPE", "Unknown message type"),
        (
            {"type": "state", "extra": 1},
            "VALIDATION_ERROR",
            "extra: Extra inputs are not permitted",
        ),
        ({"type": "step"}, "VALIDATION_ERROR", "data: Field required"),
        (
            {"type": "step", "data": {"tool_name": 5}},
            "VALIDATION_ERROR",
            "tool_name: Input should be a valid string",
        ),
        (
            {"type": "reset", "data": {"seed": -1}},
            "VALIDATION_ERROR",
            "seed: Input should be greater than or equal to 0",
        ),
    ],
)
def test_bad_frames_are_answered_and_the_session_survives(
    echo_server: Any, frame: Any, code: str, message: str
) -> None:
    with ws(echo_server) as s:
        ask(s, {"type": "reset", "data": {"episode_id": "kept"}})
        error = ask(s, frame)
        assert error["type"] == "error"
        assert error["data"]["code"] == code
        assert message in error["data"]["message"]
        assert ask(s, {"type": "state"})["data"]["episode_id"] == "kept"


def test_validation_error_lists_pydantic_errors(echo_server: Any) -> None:
    with ws(echo_server) as s:
        error = ask(s, {"type": "step", "data": {"tool_name": 5}})["data"]
        assert error["errors"][0]["type"] == "string_type"
        assert error["errors"][0]["loc"] == ["tool_name"]


def test_binary_frame_ends_only_that_session(echo_server: Any) -> None:
    with ws(echo_server) as other:
        ask(other, {"type": "reset", "data": {"episode_id": "other"}})
        with ws(echo_server) as s:
            error = ask(s, b'{"type": "state"}')
            assert error["data"]["code"] == "SESSION_ERROR"
            assert "text frame" in error["data"]["message"]
            with pytest.raises(ConnectionClosed):
                s.recv(timeout=5)
        assert ask(other, {"type": "state"})["data"]["episode_id"] == "other"
    echo_server.wait_for(lambda: echo_server.pool.active_sessions == 0)


def test_environment_exceptions_are_execution_errors(serve: Any) -> None:
    server = serve(create_app(Broken, Message, Echoed))
    with ws(server) as s:
        assert ask(s, {"type": "reset"})["data"] == {
            "message": "ValueError: reset is broken",
            "code": "EXECUTION_ERROR",
        }
        assert ask(s, {"type": "state"})["data"]["code"] == "EXECUTION_ERROR"
        step = ask(s, {"type": "step", "data": {"message": "x", "fail": True}})
        assert step["data"] == {
            "message": "RuntimeError: asked to fail on 'x'",
            "code": "EXECUTION_ERROR",
        }
        assert (
            ask(s, {"type": "step", "data": {"message": "fine"}})["data"]["observation"][
                "echoed_message"
            ]
            == "fine"
        )


def test_factory_failure_refuses_the_connection(serve: Any) -> None:
    server = serve(create_app(failing_factory, Message, Echoed))
    with ws(server) as s:
        frame = json.loads(s.recv(timeout=5))
        assert frame["data"]["code"] == "FACTORY_ERROR"
        assert frame["data"]["factory_name"] == "failing_factory"
        assert "RuntimeError: no GPU today" in frame["data"]["message"]
        with pytest.raises(ConnectionClosed):
            s.recv(timeout=5)
    assert server.pool.active_sessions == 0


def test_capacity_reached(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=1))
    with ws(server) as first:
        ask(first, {"type": "reset"})
        with ws(server) as second:
            frame = json.loads(second.recv(timeout=5))
            assert frame == {
                "type": "error",
                "data": {
                    "message": "Server at capacity: 1/1 sessions active. Cannot accept new connections.",
                    "code": "CAPACITY_REACHED",
                    "active_sessions": 1,
                    "max_sessions": 1,
                },
            }
        assert (
            ask(first, {"type": "step", "data": {"message": "still here"}})["type"] == "observation"
        )


def test_oversized_frame_closes_only_that_connection(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed), ws_max_size=64 * 1024)
    with ws(server) as other:
        ask(other, {"type": "reset", "data": {"episode_id": "small"}})
        with ws(server, max_size=None) as s:
            s.send(json.dumps({"type": "step", "data": {"message": "x" * 200_000}}))
            with pytest.raises(ConnectionClosed) as closed:
                s.recv(timeout=5)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        assert ask(other, {"type": "state"})["data"]["episode_id"] == "small"


def test_mcp_socket_speaks_bare_jsonrpc(echo_server: Any) -> None:
    with ws(echo_server, "/mcp") as s:
        created = ask(s, {"jsonrpc": "2.0", "method": "openenv/session/create", "id": 1})
        tools = ask(s, {"jsonrpc": "2.0", "method": "tools/list", "id": 2})
        assert [t["name"] for t in tools["result"]["tools"]] == ["echo_message", "echo_with_length"]
        assert ask(s, "nope")["error"]["code"] == -32700
        close_own = ask(
            s,
            {
                "jsonrpc": "2.0",
                "method": "openenv/session/close",
                "params": {"session_id": created["result"]["session_id"]},
                "id": 3,
            },
        )
        assert (
            close_own["error"]["message"]
            == "Cannot close active WebSocket-managed session via MCP method"
        )


def test_a_socket_can_join_a_session_created_over_http(echo_server: Any) -> None:
    import httpx

    with httpx.Client(base_url=echo_server.url) as http:

        def rpc(method: str, **params: Any) -> dict[str, Any]:
            return http.post(
                "/mcp", json={"jsonrpc": "2.0", "method": method, "params": params, "id": 1}
            ).json()  # type: ignore[no-any-return]

        session_id = rpc("openenv/session/create")["result"]["session_id"]
        with ws(echo_server, f"/ws?session_id={session_id}") as s:
            ask(s, {"type": "reset", "data": {"episode_id": "shared"}})
            rpc(
                "tools/call", name="echo_message", arguments={"message": "x"}, session_id=session_id
            )
            assert ask(s, {"type": "state"})["data"]["episode_id"] == "shared"
            with ws(echo_server, f"/ws?session_id={session_id}") as second:
                refused = json.loads(second.recv(timeout=5))
                assert refused["data"] == {
                    "message": "The session already has an attached WebSocket",
                    "code": "SESSION_ERROR",
                }
        # The session outlives its socket ...
        echo_server.wait_for(lambda: not echo_server.pool.get(session_id).attached)
        assert rpc("tools/list", session_id=session_id)["result"]["tools"]
        # ... and a close requested while a socket is attached waits for the socket to leave.
        with ws(echo_server, f"/ws?session_id={session_id}") as s:
            ask(s, {"type": "state"})
            assert rpc("openenv/session/close", session_id=session_id)["result"] == {
                "session_id": session_id,
                "closed": False,
                "closing": True,
            }
        echo_server.wait_for(lambda: echo_server.pool.active_sessions == 0)
        with ws(echo_server, "/ws?session_id=nope") as s:
            assert json.loads(s.recv(timeout=5))["data"] == {
                "message": "Unknown session_id: nope",
                "code": "SESSION_ERROR",
                "reason": "session_not_found",  # so the client raises SessionNotFoundError
                "session_id": "nope",
            }


def _step(message: str, delay_s: float = 0.0) -> str:
    return json.dumps({"type": "step", "data": {"message": message, "delay_s": delay_s}})


def _echoed(socket: Any) -> str:
    return str(json.loads(socket.recv(timeout=10))["data"]["observation"]["echoed_message"])


def test_requests_sent_during_a_step_are_answered_in_order_up_to_the_limit(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(_step("slow", delay_s=0.5))
        for i in range(32):
            s.send(_step(f"m{i}"))
        assert [_echoed(s) for _ in range(33)] == ["slow"] + [f"m{i}" for i in range(32)]
        s.send(_step("after"))
        assert _echoed(s) == "after"
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(_step("slow", delay_s=1.0))
        for i in range(33):
            s.send(_step(f"m{i}"))
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                s.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert "more than 32 requests" in closed.value.rcvd.reason


def test_a_burst_answered_as_it_comes_is_not_refused(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, run_on_event_loop=True))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        for i in range(200):
            s.send(_step(f"m{i}"))
        assert [_echoed(s) for _ in range(200)] == [f"m{i}" for i in range(200)]


def test_a_binary_frame_behind_a_step_is_refused_after_the_step_is_answered(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(_step("slow", delay_s=0.3))
        s.send(b"binary")
        assert _echoed(s) == "slow"
        assert json.loads(s.recv(timeout=10))["data"]["code"] == "SESSION_ERROR"
        with pytest.raises(ConnectionClosed):
            s.recv(timeout=10)
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_a_close_message_behind_a_step_ends_the_session_after_it(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(_step("slow", delay_s=0.3))
        s.send(json.dumps({"type": "close"}))
        s.send(_step("never"))
        assert _echoed(s) == "slow"
        with pytest.raises(ConnectionClosed) as closed:
            s.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000
    server.wait_for(lambda: server.pool.active_sessions == 0)


def test_a_typed_step_frame_read_in_one_pass_answers_errors_as_before(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, run_on_event_loop=True))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        s.send(_step("fast"))
        assert _echoed(s) == "fast"
        error = ask(s, {"type": "step", "data": {"message": 5}})["data"]
        assert error["code"] == "VALIDATION_ERROR"
        assert error["errors"][0]["loc"] == ["message"]
        error = ask(s, {"type": "step", "data": {"message": "x"}, "more": 1})["data"]
        assert error["code"] == "VALIDATION_ERROR" and "more" in error["message"]
        assert (
            ask(s, {"type": "step", "data": {"message": 1e400}})["data"]["code"] == "INVALID_JSON"
        )
        s.send(_step("still here"))
        assert _echoed(s) == "still here"


class OwnWaits(Environment[Message, Echoed, State]):
    """An ``async`` step that waits ``delay_s``, bounded by a timeout of its own (0.2 s), and
    says whether one task ran it from start to end."""

    def __init__(self) -> None:
        self._state = State(episode_id="own-waits")

    def reset(self, **kwargs: Any) -> Echoed:
        return Echoed(echoed_message="ready")

    def step(self, action: Message, **kwargs: Any) -> Echoed:
        raise NotImplementedError("the server awaits step_async")

    async def step_async(self, action: Message, **kwargs: Any) -> Echoed:
        started_in = asyncio.current_task()
        try:
            await _within(0.2, asyncio.sleep(action.delay_s))
            waited = "waited"
        except (TimeoutError, asyncio.TimeoutError):
            waited = "timed out"
        same = asyncio.current_task() is started_in
        return Echoed(echoed_message=f"{waited} in {'one task' if same else 'two tasks'}")

    @property
    def state(self) -> State:
        return self._state


async def _within(timeout_s: float, waiting: Any) -> None:
    """``asyncio.timeout`` where there is one (it bounds the task that entered it)."""
    if sys.version_info < (3, 11):
        await asyncio.wait_for(waiting, timeout_s)
        return
    async with asyncio.timeout(timeout_s):
        await waiting


def test_an_async_step_that_waits_runs_in_one_task_and_its_own_timeouts_work(serve: Any) -> None:
    server = serve(create_app(OwnWaits, Message, Echoed))
    with ws(server) as s:
        ask(s, {"type": "reset"})
        started = time.monotonic()
        s.send(_step("slow", delay_s=5.0))
        assert _echoed(s) == "timed out in one task"
        assert time.monotonic() - started < 3
        s.send(_step("quick", delay_s=0.01))
        assert _echoed(s) == "waited in one task"
