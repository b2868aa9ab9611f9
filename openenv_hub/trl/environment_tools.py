"""Training on any served environment with TRL's ``GRPOTrainer``.

TRL drives multi-turn tool use itself when given an ``environment_factory``: a class with no
constructor arguments, a ``reset(**dataset_columns) -> str | None``, one public method per tool
(typed, with a Google-style docstring) and, optionally, ``get_reward() -> float``, which TRL
calls after each rollout and logs as ``rewards/<ClassName>/mean``. :func:`environment_factory`
builds that class for the environment at a URL:

- an MCP environment gets one method per tool, named and documented as the tool is;
- any other environment gets one method named after its action model (``Guess`` → ``guess``)
  whose parameters are the action's fields;
- each call sends one ``step`` over the environment's WebSocket and returns the observation as
  text; a failed tool call, or a call after the episode ended, raises ``ValueError``, which TRL
  shows the model as the tool's answer;
- ``get_reward()`` is the episode's return as the environment computed it (its rubric's
  rewards, delayed ones included).

Example::

    from trl import GRPOConfig, GRPOTrainer
    from openenv_hub.trl import environment_factory

    trainer = GRPOTrainer(
        model="Qwen/Qwen3-0.6B",
        train_dataset=dataset,                       # a "prompt" column (+ "seed", ...)
        environment_factory=environment_factory("http://127.0.0.1:8000"),
        args=GRPOConfig(max_completion_length=512),
    )

This module needs neither TRL nor torch: the class it builds follows TRL's contract by shape.

Layer: client.
"""

from __future__ import annotations

import inspect
import json
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import httpx

from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.errors import ConfigurationError
from openenv_hub.protocol.urls import http_url

__all__ = ["ToolEnvironment", "environment_factory", "tool_schemas"]

_JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}


class ToolEnvironment:
    """One rollout's connection to the environment, in the shape TRL's ``environment_factory``
    expects. Made by :func:`environment_factory`; subclass it to change how observations read
    (override ``_render``) or which reset parameters come from the dataset (``reset_params``).

    Attributes:
        rewards: The reward of each step of the current episode.
        breakdowns: The rubric's breakdown of each step (empty dicts without a rubric).
        done: Whether the episode ended.
    """

    base_url: ClassVar[str] = ""
    #: Dataset columns passed on to the environment's ``reset`` when present.
    reset_params: ClassVar[tuple[str, ...]] = ("seed",)
    client_options: ClassVar[dict[str, Any]] = {}

    def __init__(self) -> None:
        self._client = GenericEnvClient(self.base_url, **self.client_options).sync()
        self._finalizer = weakref.finalize(self, self._client.close)
        self.rewards: list[float] = []
        self.breakdowns: list[dict[str, float]] = []
        self.done = False

    def reset(self, **kwargs: Any) -> str | None:
        """Start an episode. The environment's first observation (after a blank line) is what
        TRL appends to the prompt's last message; None when there is nothing to show."""
        params = {k: kwargs[k] for k in self.reset_params if kwargs.get(k) is not None}
        result = self._client.reset(**params)
        self.rewards, self.breakdowns, self.done = [], [], result.done
        text = self._render(result.observation)
        return None if text == "{}" else "\n\n" + text

    def get_reward(self) -> float:
        """The episode's return: the sum of the rewards the environment gave its steps."""
        return float(sum(self.rewards))

    def _step(self, action: dict[str, Any]) -> str:
        if self.done:
            raise ValueError("The episode is over; stop calling tools.")
        result = self._client.step(action)
        observation = result.observation
        self.rewards.append(float(result.reward or 0.0))
        breakdown = (observation.get("metadata") or {}).get("reward_breakdown") or {}
        self.breakdowns.append(dict(breakdown))
        self.done = result.done
        error = observation.get("error")
        if isinstance(error, dict):
            raise ValueError(str(error.get("message") or error))
        return self._render(observation)

    def _render(self, observation: dict[str, Any]) -> str:
        """The observation as the model reads it: a tool's result, or the fields as JSON."""
        result = observation.get("result")
        if isinstance(result, dict) and "data" in result:
            data = result["data"]
            return data if isinstance(data, str) else json.dumps(data)
        shown = {k: v for k, v in observation.items() if k != "metadata" and v is not None}
        return json.dumps(shown, ensure_ascii=False)

    def _close(self) -> None:
        """End the session now (it also ends when the object is garbage collected)."""
        self._finalizer()


def environment_factory(
    base_url: str,
    *,
    name: str | None = None,
    tools: Sequence[str] | None = None,
    reset_params: Sequence[str] = ("seed",),
    base: type[ToolEnvironment] = ToolEnvironment,
    timeout_s: float = 30.0,
    **client_options: Any,
) -> type[ToolEnvironment]:
    """A :class:`ToolEnvironment` class for the environment served at ``base_url``.

    The server is asked once, now, for its action schema (and its tools, for an MCP
    environment), so this blocks briefly and fails early when the server is unreachable.

    Args:
        base_url: The environment server.
        name: The class name, under which TRL logs the reward (``rewards/<name>/mean``).
            Default: the environment's name in CamelCase (``echo_env`` → ``EchoEnv``).
        tools: Expose only these MCP tools (default: all).
        reset_params: Dataset columns passed on to ``reset`` (default: ``seed``).
        base: The class to derive from (a subclass of :class:`ToolEnvironment`).
        timeout_s: Time allowed for the schema requests.
        client_options: Passed to the WebSocket client (``message_timeout_s``, ...).
    """
    url = http_url(base_url)
    with httpx.Client(base_url=url, timeout=timeout_s, trust_env=False) as http:
        schema = _get(http, "/schema")["action"]
        env_name = str(_get(http, "/metadata").get("name") or "Environment")
    if _is_mcp(schema):
        methods = _tool_methods(base_url, tools, client_options)
    else:
        methods = {_snake(schema.get("title") or "act"): _action_method(schema)}
    namespace: dict[str, Any] = {
        **methods,
        "base_url": base_url,
        "reset_params": tuple(reset_params),
        "client_options": dict(client_options),
        "__doc__": f"Tools of the environment at {base_url}: {', '.join(methods)}.",
    }
    return type(name or _camel(env_name), (base,), namespace)


def tool_schemas(environment: type[ToolEnvironment]) -> list[dict[str, Any]]:
    """The JSON schemas of a class's tools, as a chat template renders them (what the model
    sees in its prompt). Needs ``transformers``."""
    from transformers.utils.chat_template_utils import get_json_schema

    names = [n for n, v in vars(environment).items() if callable(v) and not n.startswith("_")]
    instance = object.__new__(environment)  # unconnected: only the methods are read
    return [get_json_schema(getattr(instance, name)) for name in sorted(names)]


def _get(http: httpx.Client, path: str) -> dict[str, Any]:
    try:
        response = http.get(path)
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise ConfigurationError(
            f"Could not read {http.base_url}{path}: {type(exc).__name__}: {exc}. Is the "
            "environment server running at that URL?"
        ) from exc
    body: dict[str, Any] = response.json()
    return body


def _is_mcp(action_schema: dict[str, Any]) -> bool:
    return "tool_name" in action_schema.get("properties", {})


def _tool_methods(
    base_url: str, wanted: Sequence[str] | None, options: dict[str, Any]
) -> dict[str, Callable[..., str]]:
    with GenericEnvClient(base_url, **options).sync() as client:
        client.reset()
        listed = client.step({"type": "list_tools"}).observation.get("tools") or []
    methods = {}
    for spec in listed:
        if wanted is not None and spec["name"] not in wanted:
            continue
        schema = spec.get("input_schema") or spec.get("inputSchema") or {}
        methods[spec["name"]] = _method(
            spec["name"], spec.get("description") or "", schema, _tool_call(spec["name"])
        )
    missing = set(wanted or ()) - set(methods)
    if missing:
        known = [spec["name"] for spec in listed]
        raise ConfigurationError(f"No tools named {sorted(missing)}; the environment has {known}")
    return methods


def _tool_call(tool: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda arguments: {"type": "call_tool", "tool_name": tool, "arguments": arguments}


def _action_method(schema: dict[str, Any]) -> Callable[..., str]:
    fields = {k: v for k, v in schema.get("properties", {}).items() if k != "metadata"}
    trimmed = {**schema, "properties": fields}
    description = schema.get("description") or f"Send one {schema.get('title', 'action')}."
    return _method(_snake(schema.get("title") or "act"), description, trimmed, lambda a: a)


def _method(
    name: str,
    description: str,
    schema: dict[str, Any],
    to_action: Callable[[dict[str, Any]], dict[str, Any]],
) -> Callable[..., str]:
    """A method ``name(self, **fields) -> str`` with the signature and docstring TRL reads."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    ordered = sorted(properties, key=lambda p: p not in required)  # required ones first
    for field_name in ordered:
        kind = _JSON_TYPES.get(properties[field_name].get("type", "string"), str)
        default = inspect.Parameter.empty if field_name in required else None
        annotations[field_name] = kind if field_name in required else kind | None
        parameters.append(
            inspect.Parameter(
                field_name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=default,
                annotation=annotations[field_name],
            )
        )

    def call(self: ToolEnvironment, *args: Any, **kwargs: Any) -> str:
        values = dict(zip(ordered, args, strict=False)) | kwargs
        return self._step(to_action({k: v for k, v in values.items() if v is not None}))

    call.__name__ = call.__qualname__ = name
    call.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    call.__annotations__ = {**annotations, "return": str}
    call.__doc__ = _docstring(description, properties, ordered)
    return call


def _docstring(description: str, properties: dict[str, Any], names: list[str]) -> str:
    """The tool's description with an ``Args:`` section for every parameter."""
    summary = description.split("\nArgs:")[0].split("\n\nArgs:")[0].strip() or "Call the tool."
    documented = dict(re.findall(r"^\s+(\w+)(?: \([^)]*\))?: (.+)$", description, re.M))
    lines = [summary, "", "Args:"]
    for name in names:
        text = properties[name].get("description") or documented.get(name) or f"The {name}."
        lines.append(f"    {name}: {text}")
    return "\n".join(lines) + "\n"


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _camel(name: str) -> str:
    return (
        "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name)) or "Env"
    )
