"""MCP tools: environments whose actions are tool calls.

Mark methods with :func:`tool` on an :class:`MCPEnvironment` subclass, or (as OpenEnv's
environments do) pass a FastMCP server to ``super().__init__(mcp)``. Each tool gets a JSON
schema built from its signature, is listed by ``ListToolsAction`` and ``tools/list``, and is
called by ``CallToolAction`` and ``tools/call``. Tools may be plain or ``async`` functions.

OpenEnv's override pattern works as it is: a subclass's ``step`` / ``step_async`` that counts
the step itself and then calls ``super().step(...)`` / ``super().step_async(...)`` is counted
once, and actions other than tool calls go to ``_step_impl`` when the subclass has one.

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
import functools
import inspect
import json
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_type_hints

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
    method: bool = True  # called with the environment first (a @tool method)

    def invoke(self, env: Any, kwargs: dict[str, Any]) -> Any:
        return self.function(env, **kwargs) if self.method else self.function(**kwargs)


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


def _build_spec(
    function: Callable[..., Any],
    name: str,
    description: str | None,
    *,
    method: bool = True,
    input_schema: dict[str, Any] | None = None,
) -> _ToolSpec:
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
    return _ToolSpec(
        name=name,
        description=description or inspect.getdoc(function) or "",
        function=function,
        arguments_model=model,
        input_schema=input_schema or _strip_titles(model.model_json_schema()),
        is_async=inspect.iscoroutinefunction(function),
        method=method,
    )


def server_tools(mcp: Any) -> dict[str, _ToolSpec]:
    """The tools of a FastMCP server (2.x ``get_tools()`` or later ``list_tools()``)."""
    lister = getattr(mcp, "get_tools", None) or getattr(mcp, "list_tools", None)
    if lister is None:
        raise TypeError(
            f"MCPEnvironment(mcp) takes a FastMCP server, not {type(mcp).__name__}; "
            "or mark methods with @tool and call super().__init__()."
        )
    found = _run_coroutine(lister())
    tools = list(found.values()) if isinstance(found, dict) else list(found)
    specs: dict[str, _ToolSpec] = {}
    for item in tools:
        function = getattr(item, "fn", None)
        if function is None:
            raise TypeError(f"FastMCP tool '{item.name}' has no Python function to call")
        schema = getattr(item, "parameters", None)
        specs[item.name] = _build_spec(
            function,
            item.name,
            getattr(item, "description", None),
            method=False,
            input_schema=dict(schema) if isinstance(schema, dict) else None,
        )
    return specs


def _run_coroutine(coroutine: Any) -> Any:
    """Run ``coroutine`` to its end from sync code, on a helper thread if a loop runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, name="openenv-fastmcp-tools")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class _ClassOrInstance:
    """A method that works on the class (its ``@tool`` methods) and on an instance (those plus
    the tools of the FastMCP server it was given)."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        functools.update_wrapper(self, function)  # type: ignore[arg-type]

    def __get__(self, instance: Any, owner: type) -> Callable[..., Any]:
        return functools.partial(self.function, owner if instance is None else instance)


def _counts_once(function: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's ``step`` / ``step_async``: remember the step count when the outermost
    call starts, so the base class counts the step only if no override did."""
    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def wrapper_async(self: Any, *args: Any, **kwargs: Any) -> Any:
            if getattr(self, "_step_started_at", None) is not None:
                return await function(self, *args, **kwargs)
            self._step_started_at = self.state.step_count
            try:
                return await function(self, *args, **kwargs)
            finally:
                self._step_started_at = None

        return wrapper_async

    @functools.wraps(function)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self, "_step_started_at", None) is not None:
            return function(self, *args, **kwargs)
        self._step_started_at = self.state.step_count
        try:
            return function(self, *args, **kwargs)
        finally:
            self._step_started_at = None

    return wrapper


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
        for name in ("step", "step_async"):
            if name in vars(cls) and not hasattr(vars(cls)[name], "__wrapped__"):
                setattr(cls, name, _counts_once(vars(cls)[name]))
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
        managed = (
            Environment.step_async,
            MCPEnvironment._step_tools_async,
            MCPEnvironment.step_async,
        )
        if "step_async" not in vars(cls) and cls.step_async in managed:
            all_async = bool(tools) and all(spec.is_async for spec in tools.values())
            setattr(cls, "step_async", managed[1] if all_async else managed[0])  # noqa: B010

    def __init__(self, mcp: Any = None) -> None:
        """``mcp``: a FastMCP server whose tools this environment serves (OpenEnv's style),
        besides its ``@tool`` methods."""
        self._state = State(episode_id=str(uuid.uuid4()))
        self.mcp_server = mcp
        self._server_tools: dict[str, _ToolSpec] = {} if mcp is None else server_tools(mcp)

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
        self._count_step()
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
        self._count_step()
        outcome = await self.call_tool_async(action.tool_name, action.arguments)
        return CallToolObservation(
            tool_name=action.tool_name, result=outcome.result, error=outcome.error
        )

    async def step_async(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        """Route an action on the event loop without going through :meth:`step`: what a
        subclass's own ``step_async`` reaches with ``super().step_async(...)``. Sync tools and
        other actions run on a worker thread."""
        if isinstance(action, ListToolsAction):
            self._count_step()
            return ListToolsObservation(tools=self.list_tools())
        if not isinstance(action, CallToolAction):
            call = functools.partial(self.step_other, action, timeout_s=timeout_s, **kwargs)
            return await asyncio.to_thread(call)
        self._count_step()
        name, arguments = action.tool_name, action.arguments
        if self.tool_is_async(name):
            outcome = await self.call_tool_async(name, arguments)
        else:
            outcome = await asyncio.to_thread(self.call_tool, name, arguments)
        return CallToolObservation(tool_name=name, result=outcome.result, error=outcome.error)

    def _count_step(self) -> None:
        """One more step, unless an override of ``step`` / ``step_async`` counted it already."""
        started = getattr(self, "_step_started_at", None)
        if started is not None and self._state.step_count != started:
            return
        self._state.step_count += 1

    def step_other(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        """Handle an action that is not a tool call. Override to accept your own actions
        (OpenEnv's ``_step_impl`` is called when the subclass has one)."""
        step_impl = getattr(self, "_step_impl", None)
        if step_impl is not None:
            return step_impl(action, timeout_s=timeout_s, **kwargs)  # type: ignore[no-any-return]
        raise TypeError(
            f"{type(self).__name__} accepts ListToolsAction and CallToolAction, "
            f"not {type(action).__name__}"
        )

    # -- tools -----------------------------------------------------------------------------

    if TYPE_CHECKING:  # to type checkers, a classmethod; at run time, instances add theirs

        @classmethod
        def list_tools(cls) -> list[Tool]: ...

        @classmethod
        def tool_is_async(cls, name: str) -> bool: ...

    else:

        @_ClassOrInstance
        def list_tools(self_or_cls: Any) -> list[Tool]:
            """The tools: ``@tool`` methods, and on an instance its FastMCP server's tools."""
            return [
                Tool(name=s.name, description=s.description, input_schema=s.input_schema)
                for s in _all_tools(self_or_cls).values()
            ]

        @_ClassOrInstance
        def tool_is_async(self_or_cls: Any, name: str) -> bool:
            spec = _all_tools(self_or_cls).get(name)
            return spec is not None and spec.is_async

    def _prepare(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[_ToolSpec, dict[str, Any]] | ToolError:
        spec = _all_tools(self).get(name)
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
            value = spec.invoke(self, kwargs)
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
            value = spec.invoke(self, kwargs)
            if spec.is_async:
                value = await value
        except Exception as exc:
            return ToolCallOutcome(error=_execution_error(exc))
        return ToolCallOutcome(result=_as_call_tool_result(value))


def _all_tools(self_or_cls: Any) -> dict[str, _ToolSpec]:
    return {**self_or_cls._tools, **(getattr(self_or_cls, "_server_tools", None) or {})}


def _execution_error(exc: Exception) -> ToolError:
    return ToolError(
        error_type=ToolErrorType.EXECUTION_ERROR, message=f"{type(exc).__name__}: {exc}"
    )
