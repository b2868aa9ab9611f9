"""Policies an evaluation plays with: a chat model behind any OpenAI-compatible endpoint, or a
Python function.

A policy is an async callable ``policy(messages, tools, seed) -> message``: it reads the
conversation so far (OpenAI chat messages) and the environment's tools, and answers with an
assistant message, which may call tools. A Python function (``--policy module:function``) has
the same signature, sync or async, and may also answer with plain text (a ``str``) or with tool
calls whose ``arguments`` are a dict.

Layer: client.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from openenv_hub.errors import ConfigurationError

__all__ = ["ChatPolicy", "Policy", "assistant_message", "load_function_policy"]

Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]], int], Awaitable[dict[str, Any]]]


def assistant_message(reply: Any) -> dict[str, Any]:
    """A policy's answer as an OpenAI assistant message: every tool call with an ``id`` and
    its ``arguments`` as JSON text."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    if not isinstance(reply, dict):
        raise ConfigurationError(f"A policy answered {reply!r}; expected a message dict or text.")
    calls = []
    for index, call in enumerate(reply.get("tool_calls") or []):
        function = call.get("function", call)
        arguments = function.get("arguments") or {}
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": call.get("id") or f"call_{index}",
                "type": "function",
                "function": {"name": function.get("name", ""), "arguments": arguments},
            }
        )
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content") or ""}
    if calls:
        message["tool_calls"] = calls
    return message


@dataclass
class ChatPolicy:
    """A model behind an OpenAI-compatible ``/chat/completions`` (vLLM, ``transformers serve``,
    a hosted API).

    Attributes:
        base_url: The API's base, e.g. ``http://127.0.0.1:8000/v1``.
        model: The model name sent with each request.
        api_key_env: The environment variable holding the API key (never a command-line value).
        sampling: Sampling settings sent with each request (``temperature``, ``top_p``,
            ``max_tokens``); the rollout's seed is sent as ``seed``.
        timeout_s: Bound of one request.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    sampling: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 300.0
    _http: httpx.AsyncClient | None = field(default=None, init=False, repr=False)

    async def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int
    ) -> dict[str, Any]:
        if self._http is None:
            key = os.environ.get(self.api_key_env)
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            self._http = httpx.AsyncClient(headers=headers, timeout=self.timeout_s, trust_env=False)
        body = {"model": self.model, "messages": messages, "seed": seed, **self.sampling}
        if tools:
            body["tools"] = tools
        url = self.base_url.rstrip("/") + "/chat/completions"
        response = await self._http.post(url, json=body)
        if response.status_code >= 400:
            raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:300]}")
        choice = response.json()["choices"][0]["message"]
        return assistant_message(choice)

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None


def load_function_policy(spec: str) -> Policy:
    """The Python policy named ``module:function`` (the current folder is importable)."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(
            f"--policy {spec!r} is not 'module:function'.",
            hint="Name a module and a function in it, e.g. --policy my_policies:play",
        )
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(
            f"Could not import the policy module {module_name!r}: {exc}",
            hint="Run the command where the module is, or install its package.",
        ) from exc
    function = getattr(module, attribute, None)
    if not callable(function):
        raise ConfigurationError(
            f"{module_name!r} has no function {attribute!r}.",
            hint=f"Define 'def {attribute}(messages, tools, seed)' in {module_name}.",
        )

    async def policy(
        messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int
    ) -> dict[str, Any]:
        reply = function(messages, tools, seed)
        if inspect.isawaitable(reply):
            reply = await reply
        return assistant_message(reply)

    return policy
