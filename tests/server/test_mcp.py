"""JSON-RPC on POST /mcp."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sample_envs import Echoed, Message, Typed

from openenv_hub import MCPEnvironment, MCPToolClient, create_app, tool


def rpc(
    client: httpx.Client, method: str, params: dict[str, Any] | None = None, id: Any = 1
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": id}
    if params is not None:
        body["params"] = params
    response = client.post("/mcp", json=body)
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


@pytest.fixture
def echo(echo_server: Any) -> Any:
    with httpx.Client(base_url=echo_server.url, timeout=10) as client:
        yield client


def test_tools_list_and_call(echo: httpx.Client) -> None:
    listed = rpc(echo, "tools/list")
    assert listed["id"] == 1
    tool = listed["result"]["tools"][0]
    assert tool["name"] == "echo_message" and tool["inputSchema"]["required"] == ["message"]
    called = rpc(
        echo, "tools/call", {"name": "echo_message", "arguments": {"message": "Hi"}}, id="two"
    )
    assert called == {
        "jsonrpc": "2.0",
        "id": "two",
        "result": {
            "content": [{"type": "text", "text": "Hi", "annotations": None, "meta": None}],
            "structured_content": {"result": "Hi"},
            "meta": None,
            "data": "Hi",
            "is_error": False,
        },
    }


@pytest.mark.parametrize(
    ("method", "params", "code", "message"),
    [
        ("tools/call", {}, -32602, "Missing 'name' in params"),
        ("tools/call", {"name": "nope"}, -32602, "Unknown tool: 'nope'"),
        ("tools/call", {"name": "echo_message", "arguments": {}}, -32602, "message"),
        ("openenv/session/close", {}, -32602, "Invalid params - 'session_id' is required"),
        ("openenv/session/close", {"session_id": "x"}, -32602, "Unknown session_id: x"),
        ("tools/list", {"session_id": "x"}, -32602, "Unknown session_id: x"),
        ("nope/nope", None, -32601, "Method not found: nope/nope"),
    ],
)
def test_errors(echo: httpx.Client, method: str, params: Any, code: int, message: str) -> None:
    reply = rpc(echo, method, params, id=7)
    assert reply["id"] == 7 and "result" not in reply
    assert reply["error"]["code"] == code and message in reply["error"]["message"]
    assert "data" in reply["error"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not json", -32700),
        (b'{"jsonrpc": "2.0", "method": "ping", "id": 1, "x": NaN}', -32700),
        (b"{}", -32600),
        (b'{"jsonrpc": "1.0", "method": "x"}', -32600),
        (b"1", -32600),
        (b'"tools/list"', -32600),
        (b"[]", -32600),  # an empty batch
    ],
)
def test_envelope_errors(echo: httpx.Client, body: bytes, code: int) -> None:
    """JSON-RPC's own error objects; a JSON body that does not parse is a -32700, not the 422
    the other routes answer, and JSON that parses but is no request a -32600 (the `openenv`
    package says -32700 "Parse error" to both)."""
    response = echo.post("/mcp", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None and reply["error"]["code"] == code


@pytest.mark.parametrize(
    ("request_id", "echoed"), [(3, 3), ("three", "three"), (None, None), ([3], None), (True, None)]
)
def test_an_invalid_request_is_answered_with_its_id(
    echo: httpx.Client, request_id: Any, echoed: Any
) -> None:
    """The client can tell which of its requests was refused, when the id can be read."""
    body = {"jsonrpc": "1.0", "method": "tools/list", "id": request_id}
    reply = echo.post("/mcp", json=body).json()
    assert reply["id"] == echoed and reply["error"]["code"] == -32600, reply
    assert "jsonrpc" in reply["error"]["message"]


TOOL_CALL = {"name": "echo_message", "arguments": {"message": "in a batch"}}
BATCH = [
    {"jsonrpc": "2.0", "method": "tools/call", "params": TOOL_CALL, "id": 1},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "method": "ping"},  # a notification of a known method: carried out
    {"jsonrpc": "2.0", "method": "nope", "id": "b"},
    {"jsonrpc": "2.0", "method": 5, "id": 3},
    1,
    {"jsonrpc": "2.0", "method": "ping", "id": 4},
]


def answered_batch(replies: list[dict[str, Any]]) -> None:
    """The replies to ``BATCH``: one per request but the notifications, in order."""
    assert [r["id"] for r in replies] == [1, "b", 3, None, 4], replies
    assert replies[0]["result"]["data"] == "in a batch"
    assert [r["error"]["code"] for r in replies[1:4]] == [-32601, -32600, -32600]
    assert replies[4]["result"] == {}


def test_a_batch_is_answered_request_by_request(echo: httpx.Client) -> None:
    response = echo.post("/mcp", json=BATCH)
    assert response.status_code == 200
    answered_batch(response.json())
    reply = echo.post("/mcp", json=BATCH[1:3])  # notifications only: no reply, as for one
    assert reply.status_code == 202 and reply.content == b""


def test_a_batch_over_the_bound_is_refused_whole(echo: httpx.Client, echo_server: Any) -> None:
    from openenv_hub.server.mcp import MAX_BATCH

    create = {"jsonrpc": "2.0", "method": "openenv/session/create"}
    reply = echo.post("/mcp", json=[{**create, "id": i} for i in range(MAX_BATCH + 1)]).json()
    assert reply["id"] is None and reply["error"]["code"] == -32600
    assert f"at most {MAX_BATCH}" in reply["error"]["message"]
    assert echo_server.pool.active_sessions == 0  # none of it was carried out
    replies = echo.post("/mcp", json=[{**create, "id": i} for i in range(MAX_BATCH)]).json()
    assert [r["id"] for r in replies] == list(range(MAX_BATCH))
    assert echo_server.pool.active_sessions == MAX_BATCH


def test_a_batch_over_the_mcp_socket_and_in_ws_frames(echo_server: Any) -> None:
    """On ``/mcp``'s socket a frame holding a batch is answered with one frame, as over HTTP.
    On ``/ws`` an ``mcp`` message holds one request (its ``data`` is an object, as OpenEnv's
    wire says): a batch there is a validation error, and the socket serves on."""
    from websockets.sync.client import connect

    base = echo_server.url.replace("http", "ws")
    with connect(base + "/mcp") as ws:
        ws.send(json.dumps(BATCH))
        answered_batch(json.loads(ws.recv(timeout=10)))
        ws.send(json.dumps(BATCH[1:3]))  # notifications only: no reply
        ws.send(json.dumps([]))
        assert json.loads(ws.recv(timeout=10))["error"]["code"] == -32600
    with connect(base + "/ws") as ws:
        ws.send(json.dumps({"type": "mcp", "data": BATCH}))
        error = json.loads(ws.recv(timeout=10))["data"]
        assert error["code"] == "VALIDATION_ERROR"
        assert "data: Input should be an object" in error["message"]
        ws.send(json.dumps({"type": "mcp", "data": BATCH[-1]}))
        assert json.loads(ws.recv(timeout=10))["data"] == {"jsonrpc": "2.0", "id": 4, "result": {}}


def test_sessions_over_http(echo: httpx.Client, echo_server: Any) -> None:
    session_id = rpc(echo, "openenv/session/create")["result"]["session_id"]
    assert echo_server.pool.active_sessions == 1
    called = rpc(
        echo,
        "tools/call",
        {"name": "echo_with_length", "arguments": {"message": "abc"}, "session_id": session_id},
    )
    assert called["result"]["data"] == {"message": "abc", "length": 3}
    assert rpc(echo, "openenv/session/close", {"session_id": session_id})["result"] == {
        "session_id": session_id,
        "closed": True,
    }
    assert echo_server.pool.active_sessions == 0


def test_capacity_over_jsonrpc(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed, max_concurrent_envs=1))
    with httpx.Client(base_url=server.url) as client:
        rpc(client, "openenv/session/create")
        full = rpc(client, "openenv/session/create")["error"]
        assert full["code"] == -32000 and full["data"] == {"active_sessions": 1, "max_sessions": 1}


def test_non_mcp_environment(serve: Any) -> None:
    server = serve(create_app(Typed, Message, Echoed))
    with httpx.Client(base_url=server.url) as client:
        assert rpc(client, "tools/list")["error"] == {
            "code": -32603,
            "message": "Environment does not support MCP",
            "data": None,
        }


def test_initialize_handshake(echo: httpx.Client) -> None:
    result = rpc(echo, "initialize", {"protocolVersion": "2025-06-18"})["result"]
    assert result["serverInfo"]["name"] == "echo_env" and "tools" in result["capabilities"]


class Oddities(MCPEnvironment):
    """Tools whose names or results test the edges of JSON-RPC and of call_tool."""

    @tool
    async def set_of_letters(self, word: str) -> Any:
        return set(word)  # not JSON

    @tool
    def rename(self, name: str, arguments: str = "") -> str:
        return f"{name}/{arguments}"


@pytest.fixture
def oddities(serve: Any) -> Any:
    return serve(create_app(Oddities))


def test_a_notification_gets_no_reply_over_http(echo: httpx.Client) -> None:
    reply = echo.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert reply.status_code == 202 and reply.content == b""
    reply = echo.post("/mcp", json={"jsonrpc": "2.0", "method": "ping"})  # a known method too
    assert reply.status_code == 202 and reply.content == b""


def test_a_notification_gets_no_reply_over_the_mcp_socket(echo_server: Any) -> None:
    from websockets.sync.client import connect

    with connect(echo_server.url.replace("http", "ws") + "/mcp") as ws:
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        ws.send(json.dumps({"jsonrpc": "2.0", "method": "ping", "id": 5}))
        assert json.loads(ws.recv(timeout=5)) == {"jsonrpc": "2.0", "id": 5, "result": {}}


def test_a_tool_result_that_is_not_json_is_an_internal_error_with_the_id(oddities: Any) -> None:
    with httpx.Client(base_url=oddities.url, timeout=10) as client:
        reply = rpc(
            client, "tools/call", {"name": "set_of_letters", "arguments": {"word": "ab"}}, id=9
        )
    assert reply["id"] == 9 and reply["error"]["code"] == -32603


async def test_call_tool_takes_arguments_as_a_dict_for_any_parameter_name(oddities: Any) -> None:
    async with MCPToolClient(oddities.url) as env:
        await env.reset()
        assert await env.call_tool("rename", {"name": "a", "arguments": "b"}) == "a/b"
        assert await env.call_tool("rename", name="c") == "c/"
    with MCPToolClient(oddities.url).sync() as sync_env:
        sync_env.reset()
        assert sync_env.call_tool("rename", arguments={"name": "d", "arguments": "e"}) == "d/e"
