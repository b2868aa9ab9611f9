"""MCP tool clients: list and call the tools of an MCP environment over ``/ws``.

Layer: client.
"""

from __future__ import annotations

from typing import Any

from openenv_hub.client._core import Codec, observation_fields, step_result
from openenv_hub.client.env_client import EnvClient
from openenv_hub.client.sync_client import SyncEnvClient
from openenv_hub.errors import ServerReplyError, ToolCallError
from openenv_hub.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Observation,
    State,
    StepResult,
    Tool,
)

__all__ = ["MCPToolClient", "SyncMCPToolClient"]


class _MCPCodec(Codec[Action, Observation, State]):
    """Parses tool listings and tool results, whichever key casing the server uses."""

    observation_type = Observation
    state_type = State

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        fields = observation_fields(payload)
        observation: Observation
        if "tools" in fields:
            fields["tools"] = [_tool(t) for t in fields["tools"]]
            observation = ListToolsObservation.model_validate(fields)
        elif "tool_name" in fields:
            observation = CallToolObservation.model_validate(fields)
        else:
            base = {k: v for k, v in fields.items() if k in Observation.model_fields}
            observation = Observation.model_validate(base)
        return step_result(payload, observation)

    @staticmethod
    def _tools_of(result: StepResult[Observation]) -> list[Tool]:
        if not isinstance(result.observation, ListToolsObservation):
            raise ServerReplyError("The server did not answer list_tools with a list of tools")
        return result.observation.tools

    @staticmethod
    def _value_of(result: StepResult[Observation], name: str) -> Any:
        obs = result.observation
        if not isinstance(obs, CallToolObservation):
            raise ServerReplyError(
                f"The server did not answer the call of '{name}' with a tool result"
            )
        if obs.error is not None:
            raise ToolCallError(name, obs.error.error_type.value, obs.error.message)
        if isinstance(obs.result, dict) and "data" in obs.result:
            return obs.result["data"]
        return obs.result


def _arguments(given: dict[str, Any] | None, keywords: dict[str, Any]) -> dict[str, Any]:
    if given is not None and not isinstance(given, dict):
        raise TypeError(
            f"call_tool's arguments must be a dict, got {type(given).__name__}; pass the tool's "
            "arguments as keywords or as one dict"
        )
    clashes = sorted(set(given or {}) & set(keywords))
    if clashes:
        raise TypeError(f"call_tool got {clashes} both in the arguments dict and as keywords")
    return {**(given or {}), **keywords}


def _tool(raw: dict[str, Any]) -> dict[str, Any]:
    schema = raw.get("input_schema", raw.get("inputSchema", {}))
    return {
        "name": raw["name"],
        "description": raw.get("description") or "",
        "input_schema": schema,
    }


class SyncMCPToolClient(SyncEnvClient[Action, Observation, State]):
    """The synchronous twin of :class:`MCPToolClient`."""

    codec: _MCPCodec

    @classmethod
    def _default_codec(cls) -> _MCPCodec:
        return _MCPCodec()

    def list_tools(self) -> list[Tool]:
        return _MCPCodec._tools_of(self.step(ListToolsAction()))

    def call_tool(
        self, name: str, /, arguments: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """Call a tool and return its value; raises ToolCallError when the tool fails.

        Pass the tool's arguments as keywords, or as a dict (for names such as ``arguments``).
        """
        action = CallToolAction(tool_name=name, arguments=_arguments(arguments, kwargs))
        return _MCPCodec._value_of(self.step(action), name)


class MCPToolClient(_MCPCodec, EnvClient[Action, Observation, State]):
    """Client of an MCP environment: ``list_tools()`` and ``call_tool(name, **arguments)``.

    Example::

        async with MCPToolClient("http://127.0.0.1:8000") as env:
            await env.reset()
            tools = await env.list_tools()
            text = await env.call_tool("echo_message", message="Hi")
    """

    async def list_tools(self) -> list[Tool]:
        return self._tools_of(await self.step(ListToolsAction()))

    async def call_tool(
        self, name: str, /, arguments: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        """Call a tool and return its value; raises ToolCallError when the tool fails.

        Pass the tool's arguments as keywords (``call_tool("echo", message="Hi")``), or as a
        dict (``call_tool("rename", {"name": "x"})``), which also reaches parameters called
        ``name`` or ``arguments``.
        """
        action = CallToolAction(tool_name=name, arguments=_arguments(arguments, kwargs))
        return self._value_of(await self.step(action), name)

    def sync(self) -> SyncMCPToolClient:
        return SyncMCPToolClient(
            self.base_url,
            codec=self,
            options=self.options,
            provider=self.provider,
            dataset=self.dataset,
        )
