"""One rollout: the task's reset, then turns of the policy, each tool call one ``step``, and
the row it is written as.

A rollout resets the environment with the task's ``reset`` arguments, shows the model the
task's prompt and the first observation, then takes up to ``max_turns`` turns. In a turn the
model answers; each tool call it makes is sent as one ``step`` and its observation goes back as
the tool's answer. **A turn without a tool call ends the rollout** (a model that replies in
plain text is done), as does the episode's end. A call of a tool that does not exist, arguments
that are not JSON, or an action the environment refuses are the model's doing: it is told, and
plays on. What the infrastructure does wrong raises
:class:`~openenv_hub.eval.failures.InfrastructureError`.

Layer: client.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.client import GenericEnvClient
from openenv_hub.errors import OpenEnvError
from openenv_hub.eval.failures import InfrastructureError, environment_failure
from openenv_hub.eval.policies import Completion, Policy
from openenv_hub.eval.tasksets import Task
from openenv_hub.eval.toolset import Toolset, render_observation

__all__ = ["Rollout", "error_row", "rollout_row"]


@dataclass
class Rollout:
    """What one play of a rollout did so far."""

    task: Task
    seed: int
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    usage: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    finish: str = "max_turns"
    policy_s: float = 0.0
    retries: int = 0
    done: bool = False

    async def play(
        self,
        env: GenericEnvClient,
        toolset: Toolset,
        policy: Policy,
        *,
        max_turns: int,
        system_prompt: str = "",
    ) -> None:
        """Play the rollout to its end.

        Raises:
            InfrastructureError: The environment or the model's endpoint failed.
        """
        first = await _env_call(env, "reset", self.task.reset)
        if system_prompt:
            self.messages.append({"role": "system", "content": system_prompt})
        shown = render_observation(first.observation)
        prompt = f"{self.task.prompt}\n\n{shown}" if self.task.prompt else shown
        self.messages.append({"role": "user", "content": prompt})
        while self.turns < max_turns and not self.done:
            self.turns += 1
            reply = await self._ask(policy, toolset)
            self.messages.append(reply)
            if not reply.get("tool_calls"):
                self.finish = "text"
                return
            for call in reply["tool_calls"]:
                await self._call(env, toolset, call)
                if self.done:
                    self.finish = "done"
                    return

    async def _ask(self, policy: Policy, toolset: Toolset) -> dict[str, Any]:
        asked = time.monotonic()
        try:
            completion = await policy(self.messages, toolset.tools, self.seed)
        except InfrastructureError:
            raise
        except Exception as exc:
            text = str(exc).strip() or "(no message)"
            raise InfrastructureError(
                "policy", f"{type(exc).__name__}: {text}", retryable=False
            ) from exc
        finally:
            self.policy_s += time.monotonic() - asked
        self._count(completion)
        return completion.message

    def _count(self, completion: Completion) -> None:
        self.retries += completion.retries
        self.usage.append(
            {
                "prompt_tokens": completion.prompt_tokens,
                "completion_tokens": completion.completion_tokens,
                "finish_reason": completion.finish_reason,
            }
        )

    async def _call(self, env: GenericEnvClient, toolset: Toolset, call: dict[str, Any]) -> None:
        name = call["function"]["name"]
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            action = toolset.action(name, arguments if isinstance(arguments, dict) else {})
        except ValueError as exc:  # unknown tool or arguments that are not JSON: the model is told
            self._answer(call, name, f"Error: {exc}")
            return
        stepped = time.monotonic()
        try:
            result = await _env_call(env, "step", action)
        except _Refused as refused:  # the environment refused the action: the model is told
            self._answer(call, name, f"Error: {refused.cause}")
            return
        observation = dict(result.observation)
        metadata = observation.get("metadata") or {}
        breakdown = metadata.get("reward_breakdown") or {}
        self.steps.append(
            {
                "action": action,
                "observation": observation,
                "reward": _reward(result.reward, metadata),
                "breakdown": breakdown,
                "done": bool(result.done),
                "duration_ms": round((time.monotonic() - stepped) * 1000, 2),
            }
        )
        self.done = bool(result.done)
        self._answer(call, name, render_observation(observation))

    def _answer(self, call: dict[str, Any], name: str, content: str) -> None:
        self.messages.append(
            {"role": "tool", "tool_call_id": call["id"], "name": name, "content": content}
        )


def _reward(reward: Any, metadata: dict[str, Any]) -> float:
    """A step's reward, or :class:`InfrastructureError` ``bad_reward`` when it cannot be
    believed: not a finite number, or marked by the server as outside its declared range (a
    defect of the environment, never a score of the model)."""
    try:
        value = float(0.0 if reward is None else reward)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        raise InfrastructureError(
            "bad_reward", f"the environment gave the reward {str(reward)[:40]!r}", retryable=False
        )
    if metadata.get("reward_out_of_range"):
        raise InfrastructureError(
            "bad_reward",
            f"the environment gave the reward {value:g}, outside the range it declares",
            retryable=False,
        )
    return value


class _Refused(Exception):
    """The environment refused the model's action (the model's doing, not a failure)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


async def _env_call(env: GenericEnvClient, method: str, argument: dict[str, Any]) -> Any:
    try:
        if method == "reset":
            return await env.reset(**argument)
        return await env.step(argument)
    except (OpenEnvError, OSError) as exc:
        failure = environment_failure(exc, str(env.base_url))
        if failure is None and method == "step":
            raise _Refused(exc) from exc
        failure = failure or InfrastructureError("environment", f"reset failed: {exc}")
        raise failure from exc


def rollout_row(rollout: Rollout, *, sample: int, pass_threshold: float) -> dict[str, Any]:
    """The row of a rollout that ended (``error`` is None)."""
    rewards = [step["reward"] for step in rollout.steps]
    total = float(sum(rewards))
    return {
        **_common(rollout, sample),
        "rewards": rewards,
        "return": total,
        "passed": total >= pass_threshold,
        "finish": rollout.finish,
        "error": None,
        "error_kind": None,
    }


def error_row(rollout: Rollout, *, sample: int, error: InfrastructureError) -> dict[str, Any]:
    """The row of a rollout the infrastructure failed: counted nowhere but in the errors."""
    return {
        **_common(rollout, sample),
        "rewards": [step["reward"] for step in rollout.steps],
        "return": None,
        "passed": None,
        "finish": "error",
        "error": str(error),
        "error_kind": error.kind,
    }


def _common(rollout: Rollout, sample: int) -> dict[str, Any]:
    task = rollout.task
    row: dict[str, Any] = {
        "split": task.split,
        "task_key": task.key,
        "sample": sample,
        "seed": rollout.seed,
        "task_digest": task.digest,
        "reset": json.dumps(task.reset, ensure_ascii=False),
        "messages": json.dumps(rollout.messages, ensure_ascii=False),
        "steps": json.dumps(rollout.steps, ensure_ascii=False),
        "tool_calls": len(rollout.steps),
        "turns": rollout.turns,
        "usage": rollout.usage,
        "prompt_tokens": _total(u["prompt_tokens"] for u in rollout.usage),
        "completion_tokens": _total(u["completion_tokens"] for u in rollout.usage),
        "finish_reason": rollout.usage[-1]["finish_reason"] if rollout.usage else None,
        "retries": rollout.retries,
        "policy_s": round(rollout.policy_s, 4),
    }
    for name, value in task.columns.items():  # the taskset's columns, to slice results by
        row.setdefault(f"task_{name}", value)
    return row


def _total(counts: Any) -> int | None:
    known = [c for c in counts if c is not None]
    return sum(known) if known else None
