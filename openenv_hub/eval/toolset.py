"""An environment's actions as the tools a chat model calls, in the OpenAI ``tools`` format.

The mapping is the one :mod:`openenv_hub.trl` uses for training: an MCP environment offers its
tools as they are listed; any other environment offers one tool named after its action model
(``Guess`` → ``guess``) whose parameters are the action's fields.

Layer: client.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

from openenv_hub.client import GenericEnvClient
from openenv_hub.errors import ConfigurationError

__all__ = ["Toolset", "environment_digest", "environment_metadata", "render_observation"]


@dataclass(frozen=True)
class Toolset:
    """The tools of one environment, and how a call to one becomes an action.

    Attributes:
        tools: The tools in the OpenAI chat format (``{"type": "function", "function": ...}``).
        mcp: Whether the environment is an MCP one (calls become ``call_tool`` actions).
    """

    tools: list[dict[str, Any]]
    mcp: bool

    @property
    def names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    def action(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The action a call of tool ``name`` sends.

        Raises:
            ValueError: There is no such tool (the model is told so).
        """
        if name not in self.names:
            raise ValueError(f"There is no tool {name!r}; the tools are {', '.join(self.names)}.")
        if self.mcp:
            return {"type": "call_tool", "tool_name": name, "arguments": arguments}
        return dict(arguments)

    @classmethod
    async def of(cls, base_url: str) -> Toolset:
        """The tools of the environment served at ``base_url``."""
        schema = _get(base_url, "/schema")["action"]
        if "tool_name" not in schema.get("properties", {}):
            return cls([_function(_snake(schema.get("title") or "act"), schema)], mcp=False)
        async with GenericEnvClient(base_url) as client:
            await client.reset()
            listed = (await client.step({"type": "list_tools"})).observation.get("tools") or []
        tools = [
            _function(t["name"], t.get("input_schema") or t.get("inputSchema") or {}, t)
            for t in listed
        ]
        return cls(tools, mcp=True)


def environment_metadata(base_url: str) -> dict[str, Any]:
    """The environment's ``/metadata`` (its name, version, ...)."""
    return _get(base_url, "/metadata")


def environment_digest(base_url: str) -> str:
    """A digest of what the server at ``base_url`` says it is (``/metadata``) and takes
    (``/schema``): the same server under another URL has the same digest."""
    both = [_get(base_url, "/metadata"), _get(base_url, "/schema")]
    text = json.dumps(both, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def render_observation(observation: dict[str, Any]) -> str:
    """An observation as the model reads it: a tool's result, or the fields as JSON."""
    result = observation.get("result")
    if isinstance(result, dict) and "data" in result:
        data = result["data"]
        return data if isinstance(data, str) else json.dumps(data)
    shown = {
        k: v
        for k, v in observation.items()
        if k not in ("metadata", "reward", "done") and v is not None
    }
    return json.dumps(shown, ensure_ascii=False)


def _function(
    name: str, schema: dict[str, Any], spec: dict[str, Any] | None = None
) -> dict[str, Any]:
    properties = {k: v for k, v in schema.get("properties", {}).items() if k != "metadata"}
    description = (spec or {}).get("description") or schema.get("description") or f"Call {name}."
    parameters = {"type": "object", "properties": properties}
    if schema.get("required"):
        parameters["required"] = [r for r in schema["required"] if r in properties]
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _get(base_url: str, path: str) -> dict[str, Any]:
    url = base_url.rstrip("/").replace("ws://", "http://").replace("wss://", "https://")
    try:
        response = httpx.get(url + path, timeout=30.0, trust_env=False)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ConfigurationError(
            f"Could not read {url}{path}: {type(exc).__name__}: {exc}",
            hint="Is the environment server running at that URL?",
        ) from exc
    body: dict[str, Any] = response.json()
    return body


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
