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

Layer: model.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError

from openenv_hub.model.environment import Environment
from openenv_hub.model.tool_specs import (
    RESERVED_TOOL_NAMES,
    TOOL_MARK,
    ToolCallOutcome,
    ToolSpec,
    as_call_tool_result,
    build_spec,
    execution_error,
    server_tools,
    tool,
)
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


class MCPEnvironment(Environment[Action, Observation, State]):
    """An environment whose actions are MCP tool calls (plus any actions of its own).

    ``step`` answers :class:`ListToolsAction` and :class:`CallToolAction`; any other action goes
    to :meth:`step_other`. When every tool is ``async``, steps run on the server's event loop
    without a thread hop.
    """

    _tools: ClassVar[dict[str, ToolSpec]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("step", "step_async"):
            if name in vars(cls) and not hasattr(vars(cls)[name], "__wrapped__"):
                setattr(cls, name, _counts_once(vars(cls)[name]))
        tools: dict[str, ToolSpec] = {}
        for klass in reversed(cls.__mro__):
            for attr in vars(klass).values():
                mark = getattr(attr, TOOL_MARK, None)
                if mark is not None:
                    spec = build_spec(attr, mark["name"], mark["description"])
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
        self._server_tools: dict[str, ToolSpec] = {} if mcp is None else server_tools(mcp)

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
    ) -> tuple[ToolSpec, dict[str, Any]] | ToolError:
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
            return ToolCallOutcome(error=execution_error(exc))
        return ToolCallOutcome(result=as_call_tool_result(value))

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
            return ToolCallOutcome(error=execution_error(exc))
        return ToolCallOutcome(result=as_call_tool_result(value))


def _all_tools(self_or_cls: Any) -> dict[str, ToolSpec]:
    return {**self_or_cls._tools, **(getattr(self_or_cls, "_server_tools", None) or {})}
