"""Policies an evaluation plays with: a Python function here, a chat model behind an
OpenAI-compatible endpoint in :mod:`openenv_hub.eval.chat_model`.

A policy is an async callable ``policy(messages, tools, seed) -> Completion``: it reads the
conversation so far (OpenAI chat messages) and the environment's tools, and answers with an
assistant message, which may call tools, and what the answer cost (tokens, ``finish_reason``).
A Python function (``--policy module:function``) takes the same arguments and returns the
message (or plain text, or tool calls whose ``arguments`` are a dict). A synchronous function
runs in worker threads, as many as rollouts run at once, so ``--concurrency`` applies to it; a
coroutine function runs on the event loop.

Layer: client.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError
from openenv_hub.support.folder_imports import import_from_folder

__all__ = ["Completion", "FunctionPolicy", "Policy", "assistant_message", "load_function_policy"]


@dataclass(frozen=True)
class Completion:
    """One answer of a policy.

    Attributes:
        message: The assistant message (OpenAI chat format).
        prompt_tokens: Tokens of the prompt, as the endpoint reported them (None: not reported).
        completion_tokens: Tokens generated, as reported.
        finish_reason: Why generation stopped (``stop``, ``length``, ``tool_calls``), as
            reported.
        retries: Requests that failed and were sent again before this answer.
    """

    message: dict[str, Any]
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str | None = None
    retries: int = 0


Policy = Callable[[list[dict[str, Any]], list[dict[str, Any]], int], Awaitable[Completion]]


def assistant_message(reply: Any, history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A policy's answer as an OpenAI assistant message: every tool call with an ``id`` and
    its ``arguments`` as JSON text. A call without an id gets ``call_N``, numbered after the
    tool calls of ``history`` (the conversation so far), so ids are unique in a rollout."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}
    if not isinstance(reply, dict):
        raise ConfigurationError(f"A policy answered {reply!r}; expected a message dict or text.")
    calls = []
    earlier = sum(len(m.get("tool_calls") or []) for m in history or [] if isinstance(m, dict))
    for index, call in enumerate(reply.get("tool_calls") or [], start=earlier):
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


def load_function_policy(
    spec: str, *, threads: int = 4, root: Path | None = None
) -> FunctionPolicy:
    """The Python policy named ``module:function``, imported from ``root`` (the current folder
    when None), run in ``threads`` worker threads when it is synchronous."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigurationError(
            f"--policy {spec!r} is not 'module:function'.",
            hint="Name a module and a function in it, e.g. --policy my_policies:play",
        )
    try:
        module = import_from_folder(module_name, root or Path.cwd())
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

    return FunctionPolicy(function, threads=threads)


class FunctionPolicy:
    """A Python function as a :data:`Policy`: a coroutine function on the event loop, any
    other in a pool of ``threads`` worker threads (so that many run side by side)."""

    def __init__(self, function: Callable[..., Any], *, threads: int = 4) -> None:
        self.function = function
        self.on_loop = inspect.iscoroutinefunction(function)
        self._threads = ThreadPoolExecutor(max(1, threads), thread_name_prefix="policy")

    async def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int
    ) -> Completion:
        if self.on_loop:
            reply = await self.function(messages, tools, seed)
        else:
            loop = asyncio.get_running_loop()
            reply = await loop.run_in_executor(self._threads, self.function, messages, tools, seed)
            if inspect.isawaitable(reply):
                reply = await reply
        return Completion(assistant_message(reply, messages))

    async def aclose(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
