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
        (b"[1]", -32700),
        (b"{}", -32600),
        (b'{"jsonrpc": "1.0", "method": "x"}', -32600),
    ],
)
def test_envelope_errors(echo: httpx.Client, body: bytes, code: int) -> None:
    """JSON-RPC's own error objects, as the `openenv` package answers them; a JSON body that
    does not parse is a -32700, not the 422 the other routes answer."""
    response = echo.post("/mcp", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 200
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None and reply["error"]["code"] == code


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
