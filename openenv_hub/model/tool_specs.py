"""What a tool is: the ``@tool`` mark, its arguments model and JSON schema, the tools of a
FastMCP server, and a tool's result or error in the shape MCP sends them.

:class:`~openenv_hub.model.tools.MCPEnvironment` builds on these to take tool calls as actions.

Layer: model.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, create_model

from openenv_hub.support.sync_bridge import run_to_end
from openenv_hub.types import ToolError, ToolErrorType

__all__ = [
    "RESERVED_TOOL_NAMES",
    "TOOL_MARK",
    "ToolCallOutcome",
    "ToolSpec",
    "as_call_tool_result",
    "build_spec",
    "execution_error",
    "server_tools",
    "tool",
]

RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close"})
TOOL_MARK = "__openenv_tool__"
"""The attribute :func:`tool` sets on a function: its tool name and description."""
_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what it is called, what it does, its arguments model and its JSON schema."""

    name: str
    description: str
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    input_schema: dict[str, Any]
    is_async: bool
    method: bool = True  # called with the environment first (a @tool method)

    def invoke(self, env: Any, kwargs: dict[str, Any]) -> Any:
        return self.function(env, **kwargs) if self.method else self.function(**kwargs)


@dataclass(frozen=True)
class ToolCallOutcome:
    """A finished tool call: exactly one of ``result`` (an MCP ``CallToolResult``) or ``error``."""

    result: dict[str, Any] | None = None
    error: ToolError | None = None


def tool(fn: _F | None = None, *, name: str | None = None, description: str | None = None) -> Any:
    """Mark a method of an :class:`MCPEnvironment` as a tool (usable bare or with arguments)."""

    def mark(f: _F) -> _F:
        setattr(f, TOOL_MARK, {"name": name or f.__name__, "description": description})
        return f

    return mark(fn) if fn is not None else mark


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title`` keys, keeping properties that are named "title"."""
    if isinstance(schema, list):
        return [_strip_titles(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {prop: _strip_titles(sub) for prop, sub in value.items()}
        else:
            out[key] = _strip_titles(value)
    return out


def build_spec(
    function: Callable[..., Any],
    name: str,
    description: str | None,
    *,
    method: bool = True,
    input_schema: dict[str, Any] | None = None,
) -> ToolSpec:
    if name in RESERVED_TOOL_NAMES:
        raise ValueError(
            f"Tool name '{name}' is reserved (reserved names: {sorted(RESERVED_TOOL_NAMES)}); "
            "rename the tool or pass @tool(name=...)."
        )
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(function).parameters.values())[1 if method else 0 :]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return ToolSpec(
        name=name,
        description=description or inspect.getdoc(function) or "",
        function=function,
        arguments_model=model,
        input_schema=input_schema or _strip_titles(model.model_json_schema()),
        is_async=inspect.iscoroutinefunction(function),
        method=method,
    )


def server_tools(mcp: Any) -> dict[str, ToolSpec]:
    """The tools of a FastMCP server (2.x ``get_tools()`` or later ``list_tools()``)."""
    lister = getattr(mcp, "get_tools", None) or getattr(mcp, "list_tools", None)
    if lister is None:
        raise TypeError(
            f"MCPEnvironment(mcp) takes a FastMCP server, not {type(mcp).__name__}; "
            "or mark methods with @tool and call super().__init__()."
        )
    found = run_to_end(lister(), thread_name="openenv-fastmcp-tools")
    tools = list(found.values()) if isinstance(found, dict) else list(found)
    specs: dict[str, ToolSpec] = {}
    for item in tools:
        function = getattr(item, "fn", None)
        if function is None:
            raise TypeError(f"FastMCP tool '{item.name}' has no Python function to call")
        schema = getattr(item, "parameters", None)
        specs[item.name] = build_spec(
            function,
            item.name,
            getattr(item, "description", None),
            method=False,
            input_schema=dict(schema) if isinstance(schema, dict) else None,
        )
    return specs


def as_call_tool_result(value: Any) -> dict[str, Any]:
    """Shape a tool's return value like an MCP ``CallToolResult`` (as OpenEnv sends it)."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    structured = value if isinstance(value, dict) else {"result": value}
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return {
        "content": [{"type": "text", "text": text, "annotations": None, "meta": None}],
        "structured_content": structured,
        "meta": None,
        "data": value,
        "is_error": False,
    }


def execution_error(exc: Exception) -> ToolError:
    return ToolError(
        error_type=ToolErrorType.EXECUTION_ERROR, message=f"{type(exc).__name__}: {exc}"
    )
