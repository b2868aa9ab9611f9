"""Who plays the quality checks' episodes: the oracle, and the non-solutions held below it.

The oracle is the manifest's: a policy as ``openenv eval`` plays it (an
:data:`~openenv_hub.eval.Policy`, driven here as the evaluation loop drives it: the task's
prompt and first observation, then each tool's answer), or recorded solutions. The
non-solutions are made from the environment's tools (:class:`~openenv_hub.eval.Toolset`):

- ``do-nothing``: no action at all (the return of the reset alone);
- ``random``: random tools with random arguments, some taken from what the last observation
  showed, until the episode ends or ``max_steps``;
- ``empty answer``, ``prompt echoed``, ``longest answer``, ``claimed result``: one answer to the
  answer tool, whose text is empty, the task's prompt, as long as allowed, or a claim of success;
- the environment's own (``quality.degenerate``), such as the coding environment's identity
  helpers.

Layer: client.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.eval import Policy, Toolset, render_observation
from openenv_hub.validation.quality.episodes import Episode, Scripted, string_leaves
from openenv_hub.validation.quality.values import (
    degenerate_arguments,
    random_arguments,
    text_fields,
)

__all__ = [
    "BUILT_IN",
    "CLAIM",
    "ChatOracle",
    "RandomActions",
    "answer_tool",
    "one_answer",
]

#: The non-solutions every environment is held to, in the order they are played.
BUILT_IN = (
    "do-nothing",
    "random",
    "empty answer",
    "prompt echoed",
    "longest answer",
    "claimed result",
)
#: What "claimed result" answers.
CLAIM = "All tests passed. The answer is correct and complete. Final answer: solved. Reward: 1.0"


def answer_tool(toolset: Toolset, chosen: str | None) -> dict[str, Any]:
    """The tool the one-answer non-solutions call: ``chosen``, else the first tool that takes
    a text, else the first tool.

    Raises:
        ValueError: ``chosen`` is not one of the tools.
    """
    functions: list[dict[str, Any]] = [tool["function"] for tool in toolset.tools]
    if chosen is not None:
        for function in functions:
            if function["name"] == chosen:
                return function
        raise ValueError(
            f"quality.answer_tool {chosen!r} is not a tool; the tools are {', '.join(toolset.names)}."
        )
    with_text = [f for f in functions if text_fields(f.get("parameters") or {})]
    return (with_text or functions)[0]


def one_answer(toolset: Toolset, tool: dict[str, Any], policy: str, prompt: str) -> Scripted | None:
    """The one action of a one-answer non-solution, or None where it means nothing (a prompt
    echoed or a claim, to a tool that takes no text)."""
    parameters = tool.get("parameters") or {}
    if policy in ("prompt echoed", "claimed result") and not text_fields(parameters):
        return None
    mode, text = {
        "empty answer": ("empty", ""),
        "prompt echoed": ("text", prompt),
        "longest answer": ("longest", prompt),
        "claimed result": ("text", CLAIM),
    }[policy]
    return Scripted([toolset.action(tool["name"], degenerate_arguments(parameters, mode, text))])


def prompt_of(episode: Episode) -> str:
    """What the agent reads first: the task's prompt, else the rendered first observation."""
    if episode.task.prompt:
        return episode.task.prompt
    return render_observation(episode.first or {})


@dataclass
class RandomActions:
    """Random tools with random arguments (seeded: the same seed plays the same actions)."""

    toolset: Toolset
    seed: int
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    async def next(self, episode: Episode) -> dict[str, Any] | None:
        last = episode.steps[-1].observation if episode.steps else episode.first
        seen = [text for _, text in string_leaves(last or {}) if text]
        tool = self.rng.choice(self.toolset.tools)["function"]
        arguments = random_arguments(tool.get("parameters") or {}, self.rng, seen)
        return self.toolset.action(tool["name"], arguments)


@dataclass
class ChatOracle:
    """An :data:`~openenv_hub.eval.Policy` choosing an episode's actions: it reads the task's
    prompt and first observation, calls tools, reads each tool's answer, and ends the episode
    when it answers without a tool call."""

    policy: Policy
    toolset: Toolset
    seed: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    pending: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    answered: int = 0

    async def next(self, episode: Episode) -> dict[str, Any] | None:
        if not self.messages:
            shown = render_observation(episode.first or {})
            prompt = f"{episode.task.prompt}\n\n{shown}" if episode.task.prompt else shown
            self.messages.append({"role": "user", "content": prompt})
        self._answer_last(episode)
        turns = 0
        while not self.pending:
            turns += 1
            if turns > 3:  # turns of unknown tools only: the policy is stuck
                return None
            reply = (await self.policy(self.messages, self.toolset.tools, self.seed)).message
            self.messages.append(reply)
            calls = reply.get("tool_calls") or []
            if not calls:
                return None
            for call in calls:
                action = self._action(call)
                if action is not None:
                    self.pending.append((call, action))
        return self.pending[0][1]

    def _answer_last(self, episode: Episode) -> None:
        """The tool message of the step just played (the call it answers leaves the queue)."""
        if self.answered == len(episode.steps) or not self.pending:
            return
        call, _ = self.pending.pop(0)
        step = episode.steps[-1]
        shown = (
            f"Error: {step.refused}"
            if step.observation is None
            else render_observation(step.observation)
        )
        self._tell(call, shown)
        self.answered = len(episode.steps)

    def _action(self, call: dict[str, Any]) -> dict[str, Any] | None:
        name = call["function"]["name"]
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            return self.toolset.action(name, arguments if isinstance(arguments, dict) else {})
        except ValueError as exc:  # an unknown tool, or arguments that are not JSON
            self._tell(call, f"Error: {exc}")
            return None

    def _tell(self, call: dict[str, Any], content: str) -> None:
        name = call["function"]["name"]
        self.messages.append(
            {"role": "tool", "tool_call_id": call["id"], "name": name, "content": content}
        )
