"""The tool bridge: the environment's own tools as an MCP server on a Unix socket, renamed
``env_NAME`` where they clash with the harness's built-ins, and nothing else there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from openenv_hub.harness import ToolBridge, offered_names
from openenv_hub.model.tools import MCPEnvironment, tool
from openenv_hub.types import Tool

pytestmark = pytest.mark.timeout(60)


class Shop(MCPEnvironment):
    @tool
    def bash(self, command: str) -> str:
        """The environment's own bash (clashes with a harness's)."""
        return f"env ran {command}"

    @tool
    def price(self, item: str) -> dict[str, Any]:
        """The price of an item."""
        if item == "boom":
            raise ValueError("no such item")
        return {"item": item, "price": 3}


@pytest.fixture
def bridge(tmp_path: Path) -> Iterator[ToolBridge]:
    env = Shop()
    served = ToolBridge(env.list_tools(), {"bash", "Read"}, env.call_tool, tmp_path / "b.sock")
    served.start()
    yield served
    served.stop()


def rpc(bridge: ToolBridge, method: str, params: dict[str, Any] | None = None) -> Any:
    transport = httpx.HTTPTransport(uds=str(bridge.path))
    with httpx.Client(transport=transport, base_url="http://127.0.0.1:8200") as client:
        body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}}
        headers = {"Accept": "application/json, text/event-stream"}
        reply = client.post("/mcp", json=body, headers=headers, timeout=10)
    assert reply.status_code == 200
    answer = reply.json()
    assert answer["id"] == 7
    return answer


def test_tools_clashing_with_builtins_are_offered_with_the_env_prefix() -> None:
    tools = [Tool(name=n, description="", input_schema={}) for n in ("bash", "Read", "price")]
    assert offered_names(tools, {"bash", "Read", "Write"}) == {
        "env_bash": "bash",
        "env_Read": "Read",
        "price": "price",
    }


def test_a_harness_sees_and_calls_the_environment_tools_over_mcp(bridge: ToolBridge) -> None:
    initialized = rpc(bridge, "initialize", {"protocolVersion": "2025-03-26"})["result"]
    assert initialized["protocolVersion"] == "2025-03-26"
    assert "tools" in initialized["capabilities"]
    listed = rpc(bridge, "tools/list")["result"]["tools"]
    assert sorted(t["name"] for t in listed) == ["env_bash", "price"]
    assert all({"name", "description", "inputSchema"} <= set(t) for t in listed)
    called = rpc(bridge, "tools/call", {"name": "env_bash", "arguments": {"command": "ls"}})
    assert called["result"]["content"][0]["text"] == "env ran ls"
    priced = rpc(bridge, "tools/call", {"name": "price", "arguments": {"item": "tea"}})
    assert json.loads(priced["result"]["content"][0]["text"]) == {"item": "tea", "price": 3}
    assert bridge.calls == ["env_bash", "price"]


@pytest.mark.parametrize("name", ["bash", "reset", "step", "state", "close", "nothing"])
def test_only_the_offered_names_can_be_called(bridge: ToolBridge, name: str) -> None:
    answer = rpc(bridge, "tools/call", {"name": name, "arguments": {}})
    assert answer["error"]["code"] == -32602 and "unknown tool" in answer["error"]["message"]


def test_a_failing_tool_is_an_error_result_not_a_crash(bridge: ToolBridge) -> None:
    failed = rpc(bridge, "tools/call", {"name": "price", "arguments": {"item": "boom"}})
    assert failed["result"]["isError"] is True
    bad = rpc(bridge, "tools/call", {"name": "price", "arguments": {"wrong": 1}})
    assert bad["result"]["isError"] is True
    assert rpc(bridge, "ping")["result"] == {}


def test_requests_are_bounded_and_notifications_get_no_reply(bridge: ToolBridge) -> None:
    transport = httpx.HTTPTransport(uds=str(bridge.path))
    with httpx.Client(transport=transport, base_url="http://127.0.0.1:8200") as client:
        huge = client.post("/mcp", content=b"[" + b" " * (5 << 20) + b"]", timeout=30)
        assert huge.status_code == 413
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post("/mcp", json=note, timeout=10).status_code == 202
        assert client.get("/mcp", timeout=10).status_code == 405
        assert client.post("/mcp", content=b"{not json", timeout=10).status_code == 400
