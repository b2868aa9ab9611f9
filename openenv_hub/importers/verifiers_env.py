"""A verifiers environment (``load_environment()`` returning a ``SingleTurnEnv``,
``MultiTurnEnv``, ``ToolEnv``, ...) served as an environment, run by the ``verifiers`` package
itself.

Each episode is one rollout of verifiers' own loop (``Environment.run_rollout``: its
``env_response``, its stop conditions, its rubric), in which the model's turns come from the
agent instead of a model client: ``reset(task_id=KEY, split=...)`` starts the rollout of a row
of the environment's dataset (``train``) or eval dataset (``eval``) and shows its prompt; each
step is one model turn:

- a call of one of the environment's tools (its ``tool_defs``, offered as MCP tools) is an
  assistant message with that tool call; the environment's answer (``env_response``) comes back;
- ``submit(completion)`` is an assistant message of plain text: the answer of a single-turn
  environment, the end of a tool-using one, a turn of a multi-turn game.

When verifiers' loop ends, the rubric scores the rollout as verifiers scores it (sync and async
reward functions, weights): the step's reward is ``state["reward"]`` and
``metadata["reward_breakdown"]`` holds each function's score (``state["metrics"]``).

``verifiers`` is imported when an environment is configured, never by ``import
openenv_hub.importers``; configuring one imports its module, which runs its code.

Layer: client.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, create_model

from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError
from openenv_hub.model.tool_specs import ToolSpec, as_call_tool_result
from openenv_hub.model.tools import MCPEnvironment
from openenv_hub.support.folder_imports import import_from_folder
from openenv_hub.types import (
    Action,
    CallToolAction,
    CallToolObservation,
    EnvironmentMetadata,
    Observation,
)

__all__ = ["VerifiersEnvironment", "VerifiersObservation", "load_verifiers_environment"]

MODEL_NAME = "openenv-agent"


class VerifiersObservation(Observation):
    """What the agent reads when a rollout starts: the row's prompt messages."""

    task_id: str = ""
    split: str = ""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    message: str = ""


def load_verifiers_environment(
    root: Path, module: str, arguments: dict[str, Any] | None = None
) -> Any:
    """``module.load_environment(**arguments)``, imported from ``root`` (runs its code).

    Raises:
        DependencyNotInstalledError: ``verifiers`` is not installed.
        ConfigurationError: It returned no environment of verifiers' classic API.
    """
    try:
        from verifiers.envs.environment import Environment as VerifiersEnv
    except ImportError:
        raise DependencyNotInstalledError(
            "verifiers", "verifiers", feature="Serving a verifiers environment"
        ) from None
    loaded = import_from_folder(module, root).load_environment(**(arguments or {}))
    if not isinstance(loaded, VerifiersEnv):
        raise ConfigurationError(
            f"{module}.load_environment() returned {type(loaded).__name__}, not a verifiers "
            "Environment (SingleTurnEnv, MultiTurnEnv, ToolEnv, ...).",
            hint="verifiers 0.4's v1 environments (tasksets and harnesses) are not supported.",
        )
    return loaded


class VerifiersEnvironment(MCPEnvironment):
    """One rollout of a verifiers environment per episode; see the module."""

    loaded: ClassVar[Any] = None
    rows: ClassVar[dict[str, dict[str, dict[str, Any]]]] = {}
    specs: ClassVar[dict[str, ToolSpec]] = {}
    submit_tool: ClassVar[str] = "submit"

    @classmethod
    def configured(
        cls,
        root: Path | str,
        *,
        module: str,
        arguments: dict[str, Any] | None = None,
        reward_range: tuple[float, float] | None = None,
    ) -> type[VerifiersEnvironment]:
        """A subclass serving ``module.load_environment(**arguments)`` from ``root`` (loaded
        now, once, and shared by the sessions, as verifiers shares it between rollouts)."""
        loaded = load_verifiers_environment(Path(root), module, arguments)
        tools = {t.name: t for t in (loaded.tool_defs or [])}
        submit = "submit" if "submit" not in tools else "submit_answer"
        specs = {
            name: _tool_spec(name, t.description, dict(t.parameters)) for name, t in tools.items()
        }
        specs[submit] = _tool_spec(
            submit,
            "Answer with text (a turn without tool calls): the answer of a single-turn task, "
            "the end of a tool-using one, a turn of a conversation.",
            {
                "type": "object",
                "properties": {"completion": {"type": "string"}},
                "required": ["completion"],
            },
        )
        attributes = {
            "loaded": loaded,
            "rows": _rows(loaded),
            "specs": specs,
            "submit_tool": submit,
            "reward_range": reward_range,
            "__module__": cls.__module__,
        }
        return type(cls.__name__, (cls,), attributes)

    def __init__(self) -> None:
        super().__init__()
        self._server_tools = dict(self.specs)
        self._rollout: _Rollout | None = None
        self._calls = 0

    # -- episode ---------------------------------------------------------------------------

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> Observation:
        raise TypeError("A verifiers environment runs on the server's event loop: use reset_async.")

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        raise TypeError("A verifiers environment runs on the server's event loop: use step_async.")

    async def reset_async(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        split: str | None = None,
        **kwargs: Any,
    ) -> VerifiersObservation:
        """Start the rollout of row ``task_id`` (its ``example_id``) of ``split`` (default:
        ``eval`` when the environment has an eval dataset, else ``train``)."""
        MCPEnvironment.reset(self, seed=seed, episode_id=episode_id)
        self._end()
        chosen_split, key = self._chosen(task_id, split)
        self._rollout = _Rollout(self.loaded, self.rows[chosen_split][key])
        self._calls = 0
        turn = await self._rollout.start()
        return VerifiersObservation(
            task_id=key,
            split=chosen_split,
            messages=turn.messages,
            message=f"Answer with the {self.submit_tool} tool"
            + (", or call the environment's tools." if len(self.specs) > 1 else "."),
            reward=0.0,
            done=turn.done,
        )

    async def step_async(
        self, action: Action, timeout_s: float | None = None, **kwargs: Any
    ) -> Observation:
        if not isinstance(action, CallToolAction) or action.tool_name not in self.specs:
            return await super().step_async(action, timeout_s=timeout_s, **kwargs)
        self._count_step()
        name = action.tool_name
        turn = await self._turn(name, dict(action.arguments))
        observation = CallToolObservation(
            tool_name=name, result=as_call_tool_result(turn.text), reward=0.0, done=turn.done
        )
        observation.metadata["messages"] = turn.messages
        if turn.done:
            observation.reward = turn.reward
            observation.metadata.update(turn.details)
        return observation

    def close(self) -> None:
        self._end()

    def get_metadata(self) -> EnvironmentMetadata:
        name = type(self.loaded).__name__ if self.loaded is not None else "verifiers"
        return EnvironmentMetadata(
            name="verifiers", description=f"A verifiers {name}, run by verifiers", version="1.0.0"
        )

    # -- tasks (the task routes) -----------------------------------------------------------

    def list_splits(self) -> list[str]:
        return list(self.rows)

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        if split not in self.rows:
            raise IndexError(split)
        return [{"key": key, "reset": {"task_id": key, "split": split}} for key in self.rows[split]]

    def num_tasks(self, split: str) -> int:
        return len(self.list_tasks(split))

    # -- helpers ---------------------------------------------------------------------------

    async def _turn(self, name: str, arguments: dict[str, Any]) -> _Turn:
        if self._rollout is None or self._rollout.finished:
            raise RuntimeError("The episode has ended: reset to start another.")
        self._calls += 1
        message: dict[str, Any]
        if name == self.submit_tool:
            message = {"content": str(arguments.get("completion", "")), "tool_calls": None}
        else:
            call = {"id": f"call_{self._calls}", "name": name, "arguments": json.dumps(arguments)}
            message = {"content": None, "tool_calls": [call]}
        return await self._rollout.send(message)

    def _chosen(self, task_id: str | None, split: str | None) -> tuple[str, str]:
        chosen = split or ("eval" if "eval" in self.rows else "train")
        if chosen not in self.rows:
            raise ValueError(f"No split {chosen!r}; the splits are {', '.join(self.rows)}")
        keys = self.rows[chosen]
        key = str(task_id) if task_id is not None else next(iter(keys))
        if key not in keys:
            raise ValueError(f"No task {key!r} in split {chosen!r} ({len(keys)} tasks)")
        return chosen, key

    def _end(self) -> None:
        rollout, self._rollout = self._rollout, None
        if rollout is not None:
            rollout.cancel()


@dataclass
class _Turn:
    """What the rollout gave back: new messages, and, at its end, the score."""

    messages: list[dict[str, Any]]
    done: bool = False
    reward: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(_text(m.get("content")) for m in self.messages)


class _Rollout:
    """verifiers' ``run_rollout`` on a task of its own, its model turns fed from outside."""

    def __init__(self, loaded: Any, row: dict[str, Any]) -> None:
        self.loaded, self.row = loaded, row
        self.asks: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.shown = 0
        self.finished = False
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> _Turn:
        client = _client_class()(self)
        self.task = asyncio.create_task(self._run(client), name="openenv-verifiers-rollout")
        return await self._next()

    async def _run(self, client: Any) -> None:
        try:
            output = await self.loaded.run_rollout(dict(self.row), client, MODEL_NAME, {})
        except Exception as exc:  # the rollout's own failure ends the episode, said as such
            await self.asks.put(("error", exc))
        else:
            await self.asks.put(("done", output))

    async def ask(self, prompt: list[Any]) -> dict[str, Any]:
        """The model turn the rollout asks for (called by the client)."""
        await self.asks.put(("prompt", prompt))
        return await self.answers.get()

    async def send(self, message: dict[str, Any]) -> _Turn:
        self.shown += 1  # the assistant message itself is the agent's, not news to it
        await self.answers.put(message)
        return await self._next()

    async def _next(self) -> _Turn:
        kind, value = await self.asks.get()
        if kind == "prompt":
            fresh = [_plain(m) for m in value[self.shown :]]
            self.shown = len(value)
            return _Turn(fresh)
        self.finished = True
        if kind == "error":
            return _Turn(
                [], done=True, details={"rollout_error": f"{type(value).__name__}: {value}"}
            )
        prompt = value.get("prompt") or []
        completion = value.get("completion") or []
        fresh = [_plain(m) for m in [*prompt, *completion][self.shown :]]
        details: dict[str, Any] = {
            "reward_breakdown": {str(k): float(v) for k, v in (value.get("metrics") or {}).items()},
            "stop_condition": value.get("stop_condition"),
        }
        if value.get("error"):
            details["rollout_error"] = str(value["error"])[:500]
        return _Turn(fresh, done=True, reward=float(value.get("reward") or 0.0), details=details)

    def cancel(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.get_loop().call_soon_threadsafe(self.task.cancel)


_CLIENT: type[Any] | None = None


def _client_class() -> type[Any]:
    """A verifiers ``Client`` whose model turns come from a :class:`_Rollout` (made once,
    when verifiers is first needed)."""
    global _CLIENT
    if _CLIENT is not None:
        return _CLIENT
    from verifiers.clients import Client
    from verifiers.types import Response, ResponseMessage, ToolCall

    class AgentClient(Client):  # type: ignore[misc]
        def __init__(self, rollout: _Rollout) -> None:
            super().__init__(rollout)

        def setup_client(self, config: Any) -> Any:
            raise TypeError("made from a rollout, never from a config")

        async def to_native_tool(self, tool: Any) -> Any:
            return tool

        async def to_native_prompt(self, messages: Any) -> tuple[Any, dict[str, Any]]:
            return messages, {}

        async def get_native_response(
            self, prompt: Any, model: str, sampling_args: Any, tools: Any = None, **kwargs: Any
        ) -> Any:
            return await self.client.ask(list(prompt))

        async def raise_from_native_response(self, response: Any) -> None:
            return None

        async def from_native_response(self, response: dict[str, Any]) -> Any:
            calls = [ToolCall(**call) for call in response.get("tool_calls") or []]
            message = ResponseMessage(
                content=response.get("content"),
                tool_calls=calls or None,
                finish_reason="tool_calls" if calls else "stop",
                is_truncated=False,
            )
            return Response(
                id="openenv", created=int(time.time()), model=MODEL_NAME, message=message
            )

        async def close(self) -> None:
            return None

    _CLIENT = AgentClient
    return AgentClient


def _tool_spec(name: str, description: str, schema: dict[str, Any]) -> ToolSpec:
    """A tool whose call is a model turn of the rollout (its arguments as the schema has them)."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    fields: dict[str, Any] = {key: (Any, ... if key in required else None) for key in properties}
    model = create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)

    async def call(env: VerifiersEnvironment, **arguments: Any) -> str:
        given = {k: v for k, v in arguments.items() if v is not None or k in required}
        return (await env._turn(name, given)).text

    return ToolSpec(name, description or f"Call {name}.", call, model, schema, is_async=True)


def _rows(loaded: Any) -> dict[str, dict[str, dict[str, Any]]]:
    splits: dict[str, dict[str, dict[str, Any]]] = {}
    for split, source, built, get in (
        ("train", "dataset_source", "dataset", "get_dataset"),
        ("eval", "eval_dataset_source", "eval_dataset", "get_eval_dataset"),
    ):
        if getattr(loaded, source, None) is None and getattr(loaded, built, None) is None:
            continue
        dataset = getattr(loaded, get)()
        splits[split] = {str(row["example_id"]): dict(row) for row in dataset}
    if not splits:
        raise ConfigurationError("The verifiers environment has no dataset and no eval dataset.")
    return splits


def _plain(message: Any) -> dict[str, Any]:
    if hasattr(message, "model_dump"):
        dumped: dict[str, Any] = message.model_dump(exclude_none=True)
        return dumped
    return dict(message)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return "" if content is None else str(content)
