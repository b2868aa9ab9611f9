"""The same WebSocket frames and HTTP bodies from our server as from the `openenv` package's."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from websockets.sync.client import connect

pytestmark = pytest.mark.peer

TRANSCRIPT: list[Any] = [
    {"type": "reset", "data": {"episode_id": "ep-42", "seed": 1, "bogus": 2}},
    {"type": "state"},
    {"type": "step", "data": {"type": "list_tools"}},
    {
        "type": "step",
        "data": {
            "type": "call_tool",
            "tool_name": "echo_message",
            "arguments": {"message": "Hello"},
        },
    },
    {
        "type": "step",
        "data": {
            "type": "call_tool",
            "tool_name": "echo_with_length",
            "arguments": {"message": "Hi"},
        },
    },
    {"type": "step", "data": {"type": "call_tool", "tool_name": "nope", "arguments": {}}},
    {"type": "state"},
    {"type": "step", "data": {"tool_name": 5}},
    {"type": "step"},
    {"type": "state", "extra": 1},
    {"type": "bogus"},
    {"data": {}},
    "not json",
    {
        "type": "mcp",
        "data": {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "echo_message", "arguments": {"message": "via mcp"}},
            "id": 11,
        },
    },
    {"type": "mcp", "data": {"jsonrpc": "2.0", "method": "nope", "id": 12}},
]


def shape(value: Any) -> Any:
    """Keys and JSON types, with values kept only where they are protocol constants."""
    if isinstance(value, dict):
        constants = ("type", "code", "error_type", "tool_name", "jsonrpc", "id")
        return {
            k: (v if k in constants else shape(v))
            for k, v in value.items()
            if k not in ("meta", "description")
        }
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


def transcript(url: str) -> list[Any]:
    replies = []
    with connect(url.replace("http://", "ws://") + "/ws") as ws:
        for message in TRANSCRIPT:
            ws.send(message if isinstance(message, str) else json.dumps(message))
            replies.append(json.loads(ws.recv(timeout=10)))
    return replies


def test_ws_transcript(our_echo: Any, peer_echo: Any) -> None:
    ours, theirs = transcript(our_echo.url), transcript(peer_echo.url)
    assert [shape(f) for f in ours] == [shape(f) for f in theirs]
    assert ours[6]["data"] == theirs[6]["data"] == {"episode_id": "ep-42", "step_count": 4}
    for mine, peer in zip(ours, theirs, strict=True):
        if mine["type"] == "observation":
            assert (
                mine["data"]["observation"].get("result", {}) is None
                or mine == peer
                or _same_tool_result(mine, peer)
            )


def _same_tool_result(mine: dict[str, Any], peer: dict[str, Any]) -> bool:
    def strip(frame: dict[str, Any]) -> Any:
        observation = dict(frame["data"]["observation"])
        if observation.get("result"):
            observation["result"] = {k: v for k, v in observation["result"].items() if k != "meta"}
        observation.pop("tools", None)
        return observation

    return bool(strip(mine) == strip(peer))


HTTP = [
    ("post", "/reset", None),
    ("post", "/reset", {"seed": 42, "episode_id": "ep-1", "foo": 1}),
    ("post", "/step", {"action": {"type": "list_tools"}}),
    (
        "post",
        "/step",
        {
            "action": {
                "type": "call_tool",
                "tool_name": "echo_message",
                "arguments": {"message": "Hi"},
            }
        },
    ),
    (
        "post",
        "/step",
        {"action": {"type": "call_tool", "tool_name": "echo_message", "arguments": {}}},
    ),
    ("post", "/step", {"action": {"foo": 1}}),
    ("post", "/step", {}),
    ("post", "/reset", {"seed": -1}),
    ("get", "/state", None),
    ("get", "/health", None),
    ("get", "/metadata", None),
    ("post", "/mcp", {"jsonrpc": "2.0", "method": "tools/list", "id": 1}),
    (
        "post",
        "/mcp",
        {
            "jsonrpc": "2.0",
            "method": "tools/call",
            "params": {"name": "echo_message", "arguments": {"message": "Hi"}},
            "id": 2,
        },
    ),
    ("post", "/mcp", {"jsonrpc": "2.0", "method": "openenv/session/create", "id": 4}),
    ("post", "/mcp", {}),
]


def http_bodies(url: str) -> list[tuple[int, Any]]:
    with httpx.Client(base_url=url, timeout=10) as client:
        return [
            (r.status_code, r.json())
            for r in (client.request(m.upper(), path, json=body) for m, path, body in HTTP)
        ]


def test_http_bodies(our_echo: Any, peer_echo: Any) -> None:
    ours, theirs = http_bodies(our_echo.url), http_bodies(peer_echo.url)
    for request, mine, peer in zip(HTTP, ours, theirs, strict=False):
        assert mine[0] == peer[0], request
        if request[1] == "/metadata":
            # Ours adds the reward range; OpenEnv's clients read only name and description.
            assert mine[1].pop("reward_range") == [None, None]
        assert shape(_without_urls(mine[1])) == shape(_without_urls(peer[1])), request


def _without_urls(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_urls(v)
            for k, v in value.items()
            if k not in ("url", "title", "icons", "annotations", "outputSchema", "execution")
        }
    if isinstance(value, list):
        return [_without_urls(v) for v in value]
    return value
