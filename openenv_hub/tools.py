"""MCP tools: environments whose actions are tool calls.

Mark methods with :func:`tool` on an :class:`MCPEnvironment` subclass. Each tool gets a JSON
schema built from its signature, is listed by ``ListToolsAction`` and ``tools/list``, and is
called by ``CallToolAction`` and ``tools/call``. Tools may be plain or ``async`` functions.

Example:
    >>> from openenv_hub import CallToolAction, MCPEnvironment, tool
    >>> class Echo(MCPEnvironment):
    ...     @tool
    ...     def echo_message(self, message: str) -> str:
    ...         '''Echo back the provided message.'''
    ...         return message
    >>> Echo().step(CallToolAction(tool_name="echo_message", arguments={"message": "Hi"})).result["data"]
    'Hi'
"""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from openenv_hub.environment import Environment
from openenv_hub.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    Tool,
    ToolError,
    ToolErrorType,
)

__all__ = ["RESERVED_TOOL_NAMES", "MCPEnvironment", "ToolCallOutcome", "tool"]

RESERVED_TOOL_NAMES = frozenset({"reset", "step", "state", "close"})
_MARK = "__openenv_tool__"
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class _ToolSpec:
    name: str
    description: str
    function: Callable[..., Any]
    arguments_model: type[BaseModel]
    input_schema: dict[str, Any]
    is_async: bool


@dataclass(frozen=True)
class ToolCallOutcome:
    """A finished tool call: exactly one of ``result`` (an MCP ``CallToolResult``) or ``error``."""

    result: dict[str, Any] | None = None
    error: ToolError | None = None


def tool(fn: F | None = None, *, name: str | None = None, description: str | None = None) -> Any:
    """Mark a method of an :class:`MCPEnvironment` as a tool (usable bare or with arguments)."""

    def mark(f: F) -> F:
        setattr(f, _MARK, {"name": name or f.__name__, "description": description})
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


def _build_spec(function: Callable[..., Any], name: str, description: str | None) -> _ToolSpec:
    if name in RESERVED_TOOL_NAMES:
        raise ValueError(
            f"Tool name '{name}' is reserved (reserved names: {sorted(RESERVED_TOOL_NAMES)}); "
            "rename the tool or pass @tool(name=...)."
        )
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(function).parameters.values())[1:]:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    return _ToolSpec(
        name=name,
        description=description or inspect.getdoc(function) or "",
        function=function,
        arguments_model=model,
        input_schema=_strip_titles(model.model_json_schema()),
        is_async=inspect.iscoroutinefunction(function),
    )


def _as_call_tool_result(value: Any) -> dict[str, Any]:
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


class MCPEnvironment(Environment[Action, Observation, State]):
    """An environment whose actions are MCP tool calls (plus any actions of its own).

    ``step`` answers :class:`ListToolsAction` and :class:`CallToolAction`; any other action goes
    to :meth:`step_other`. When every tool is ``async``, steps run on the server's event loop
    without a thread hop.
    """

    _tools: ClassVar[dict[str, _ToolSpec]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tools: dict[str, _ToolSpec] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass).values():
                mark = getattr(attr, _MARK, None)
                if mark is not None:
                    spec = _build_spec(attr, mark["name"], mark["description"])
                    tools[spec.name] = spec
        cls._tools = tools
        # Steps run on the event loop only when every tool is async; a step_async written by
        # the subclass itself is left alone.
        managed = (Environment.step_async, MCPEnvironment._step_tools_async)
        if "step_async" not in vars(cls) and cls.step_async in managed:
            all_async = bool(tools) and all(spec.is_async for spec in tools.values())
            setattr(cls, "step_async", managed[1] if all_async else managed[0])  # noqa: B010

    def __init__(self) -> None:
        self._state = State(episode_id=str(uuid.uuid4()))

    # -- Environment API -------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        self._state = State(episode_id=episode_id or str(uuid.uuid4()))
        return Observation(done=False, reward=0.0)

    @property
    def state(self) -> State:
        return self._state

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        self._state.step_count += 1
        if isinstance(action, ListToolsAction):
            return ListToolsObservation(tools=self.list_tools())
        if isinstance(action, CallToolAction):
            outcome = self.call_tool(action.tool_name, action.arguments)
            return CallToolObservation(
                tool_name=action.tool_name, result=outcome.result, error=outcome.error
            )
        return self.step_other(action, timeout_s=timeout_s, **kwargs)

    async def _step_tools_async(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, CallToolAction):
            return self.step(action, timeout_s=timeout_s, **kwargs)
        self._state.step_count += 1
        outcome = await self.call_tool_async(action.tool_name, action.arguments)
        return CallToolObservation(
            tool_name=action.tool_name, result=outcome.result, error=outcome.error
        )

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        """Handle an action that is not a tool call. Override to accept your own actions."""
        raise TypeError(
            f"{type(self).__name__} accepts ListToolsAction and CallToolAction, "
            f"not {type(action).__name__}"
        )

    # -- tools -----------------------------------------------------------------------------

    @classmethod
    def list_tools(cls) -> list[Tool]:
        return [
            Tool(name=s.name, description=s.description, input_schema=s.input_schema)
            for s in cls._tools.values()
        ]

    def _prepare(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[_ToolSpec, dict[str, Any]] | ToolError:
        spec = self._tools.get(name)
        if spec is None:
            return ToolError(
                error_type=ToolErrorType.TOOL_NOT_FOUND, message=f"Unknown tool: '{name}'"
            )
        try:
            validated = spec.arguments_model.model_validate(arguments)
        except ValidationError as exc:
            return ToolError(error_type=ToolErrorType.INVALID_ARGS, message=str(exc))
        return spec, {k: getattr(validated, k) for k in type(validated).model_fields}

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        """Call a tool synchronously (``async`` tools get an event loop of their own)."""
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolError):
            return ToolCallOutcome(error=prepared)
        spec, kwargs = prepared
        try:
            value = spec.function(self, **kwargs)
            if spec.is_async:
                value = asyncio.run(value)
        except Exception as exc:
            return ToolCallOutcome(error=_execution_error(exc))
        return ToolCallOutcome(result=_as_call_tool_result(value))

    async def call_tool_async(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        """Call a tool from the event loop (meant for ``async`` tools; see :meth:`tool_is_async`)."""
        prepared = self._prepare(name, arguments)
        if isinstance(prepared, ToolError):
            return ToolCallOutcome(error=prepared)
        spec, kwargs = prepared
        try:
            value = spec.function(self, **kwargs)
            if spec.is_async:
                value = await value
        except Exception as exc:
            return ToolCallOutcome(error=_execution_error(exc))
        return ToolCallOutcome(result=_as_call_tool_result(value))

    @classmethod
    def tool_is_async(cls, name: str) -> bool:
        spec = cls._tools.get(name)
        return spec is not None and spec.is_async


def _execution_error(exc: Exception) -> ToolError:
    return ToolError(
        error_type=ToolErrorType.EXECUTION_ERROR, message=f"{type(exc).__name__}: {exc}"
    )
