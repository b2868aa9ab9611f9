"""MCP tools on environments: schemas, results, errors."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from openenv_hub import CallToolAction, CallToolObservation, ListToolsAction, MCPEnvironment, tool
from openenv_hub.model.tools import RESERVED_TOOL_NAMES


class Point(BaseModel):
    x: int
    y: int


class Tools(MCPEnvironment):
    @tool
    def add(self, a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    @tool(name="where", description="Which thread runs me.")
    def where_am_i(self) -> str:
        return threading.current_thread().name

    @tool
    def shape(self, kind: Literal["dot", "line"], at: Point) -> Point:
        return at

    @tool
    def boom(self) -> None:
        raise RuntimeError("kaboom")


class AsyncTools(MCPEnvironment):
    @tool
    async def wait(self, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"


def call(env: MCPEnvironment, name: str, **arguments: Any) -> CallToolObservation:
    result = env.step(CallToolAction(tool_name=name, arguments=arguments))
    assert isinstance(result, CallToolObservation)
    return result


def test_schemas_come_from_signatures() -> None:
    tools = {t.name: t for t in Tools.list_tools()}
    assert set(tools) == {"add", "where", "shape", "boom"}
    assert tools["add"].description == "Add two numbers."
    assert tools["add"].input_schema == {
        "additionalProperties": False,
        "properties": {"a": {"type": "integer"}, "b": {"default": 2, "type": "integer"}},
        "required": ["a"],
        "type": "object",
    }
    assert tools["where"].description == "Which thread runs me."
    assert tools["shape"].input_schema["properties"]["kind"] == {
        "enum": ["dot", "line"],
        "type": "string",
    }
    assert "Point" in tools["shape"].input_schema["$defs"]


def test_results_and_errors() -> None:
    env = Tools()
    assert call(env, "add", a=1).result["data"] == 3
    assert call(env, "add", a=1).result["content"][0]["text"] == "3"
    assert call(env, "shape", kind="dot", at={"x": 1, "y": 2}).result["structured_content"] == {
        "x": 1,
        "y": 2,
    }
    assert call(env, "nope").error.error_type.value == "tool_not_found"  # type: ignore[union-attr]
    invalid = call(env, "add", a="one").error
    assert (
        invalid is not None
        and invalid.error_type.value == "invalid_args"
        and "a" in invalid.message
    )
    failed = call(env, "boom").error
    assert failed is not None and failed.error_type.value == "execution_error"
    assert failed.message == "RuntimeError: kaboom"
    assert [t.name for t in env.step(ListToolsAction()).tools] == ["add", "where", "shape", "boom"]  # type: ignore[attr-defined]
    assert env.state.step_count == 7


def test_async_tools_step_on_the_loop_and_sync_tools_do_not() -> None:
    from openenv_hub.model.environment import Environment

    assert AsyncTools.step_async is not Environment.step_async
    assert Tools.step_async is Environment.step_async
    env = AsyncTools()
    result = asyncio.run(env.step_async(CallToolAction(tool_name="wait", arguments={"seconds": 0})))
    assert result.result["data"] == "done"  # type: ignore[attr-defined]
    assert call(env, "wait", seconds=0).result["data"] == "done"


@pytest.mark.parametrize("name", sorted(RESERVED_TOOL_NAMES))
def test_reserved_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="reserved"):

        class Bad(MCPEnvironment):
            @tool(name=name)
            def anything(self) -> None: ...


def test_other_actions_are_refused_clearly() -> None:
    from openenv_hub import Action

    with pytest.raises(TypeError, match="accepts ListToolsAction and CallToolAction"):
        Tools().step(Action())
