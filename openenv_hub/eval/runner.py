"""The evaluation loop: every (task, sample) pair not yet in the results folder is played once,
``concurrency`` at a time, each on its own slot of an :class:`~openenv_hub.client.EnvPool`.

A rollout resets the environment with the task's ``reset`` arguments, shows the model the
task's prompt and the first observation, then takes up to ``max_turns`` turns. In a turn the
model answers; each tool call it makes is sent as one ``step`` and its observation goes back as
the tool's answer. **A turn without a tool call ends the rollout** (a model that replies in
plain text is done), as does the episode's end. The rollout's return is the sum of the rewards
the environment gave its steps; it passes when the return reaches ``pass_threshold``.

Layer: client.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openenv_hub.client import EnvPool
from openenv_hub.errors import SlotError
from openenv_hub.eval.policies import Policy
from openenv_hub.eval.results import ResultsFolder
from openenv_hub.eval.tasksets import Task
from openenv_hub.eval.toolset import Toolset, render_observation

__all__ = ["EvalPlan", "missing_pairs", "rollout_seed", "run_eval"]


@dataclass(frozen=True)
class EvalPlan:
    """What to play, and how.

    Attributes:
        tasks: The tasks.
        rollouts_per_task: Samples of each task (K).
        concurrency: Rollouts played at once (N).
        max_turns: Model turns allowed in one rollout.
        pass_threshold: The return at or above which a rollout passes.
        seed: The base seed; each rollout's seed is derived from it, the task and the sample.
        system_prompt: A system message put before the task's prompt ("" for none).
    """

    tasks: list[Task]
    rollouts_per_task: int = 1
    concurrency: int = 4
    max_turns: int = 8
    pass_threshold: float = 1.0
    seed: int = 0
    system_prompt: str = ""


def rollout_seed(seed: int, task: Task, sample: int) -> int:
    """The seed of one rollout: stable across runs and resumes, different for each pair."""
    digest = hashlib.sha256(f"{seed}:{task.split}:{task.key}:{sample}".encode()).hexdigest()
    return int(digest[:8], 16)


def missing_pairs(plan: EvalPlan, results: ResultsFolder) -> list[tuple[Task, int]]:
    """The (task, sample) pairs the results folder does not hold yet."""
    done = results.done()
    return [
        (task, sample)
        for task in plan.tasks
        for sample in range(plan.rollouts_per_task)
        if (task.split, task.key, sample) not in done
    ]


async def run_eval(
    base_url: str,
    plan: EvalPlan,
    policy: Policy,
    results: ResultsFolder,
    *,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Play every missing pair, writing each rollout as it ends; returns how many were played."""
    pairs = missing_pairs(plan, results)
    if not pairs:
        return 0
    toolset = await Toolset.of(base_url)
    queue: asyncio.Queue[tuple[Task, int]] = asyncio.Queue()
    for pair in pairs:
        queue.put_nowait(pair)
    size = min(plan.concurrency, len(pairs))

    async def worker(slot: int, pool: EnvPool[Any, Any, Any]) -> None:
        while not queue.empty():
            task, sample = queue.get_nowait()
            row = await _play(pool, slot, toolset, policy, plan, task, sample)
            results.append(row)
            if on_row is not None:
                on_row(row)

    pool: EnvPool[Any, Any, Any]
    async with EnvPool(base_url, size=size) as pool:
        await asyncio.gather(*(worker(i, pool) for i in range(size)))
    return len(pairs)


async def _play(
    pool: EnvPool[Any, Any, Any],
    slot: int,
    toolset: Toolset,
    policy: Policy,
    plan: EvalPlan,
    task: Task,
    sample: int,
) -> dict[str, Any]:
    seed = rollout_seed(plan.seed, task, sample)
    rollout = _Rollout()
    started = time.monotonic()
    try:
        await rollout.play(pool, slot, toolset, policy, plan, task, seed)
    except Exception as exc:
        rollout.finish, rollout.error = "error", f"{type(exc).__name__}: {exc}"
    rewards = [step["reward"] for step in rollout.steps]
    total = float(sum(rewards))
    return {
        "split": task.split,
        "task_key": task.key,
        "sample": sample,
        "seed": seed,
        "reset": json.dumps(task.reset, ensure_ascii=False),
        "messages": json.dumps(rollout.messages, ensure_ascii=False),
        "steps": json.dumps(rollout.steps, ensure_ascii=False),
        "tool_calls": len(rollout.steps),
        "turns": rollout.turns,
        "rewards": rewards,
        "return": total,
        "passed": rollout.error is None and total >= plan.pass_threshold,
        "finish": rollout.finish,
        "error": rollout.error,
        "duration_s": round(time.monotonic() - started, 4),
        "policy_s": round(rollout.policy_s, 4),
    }


@dataclass
class _Rollout:
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0
    finish: str = "max_turns"
    error: str | None = None
    policy_s: float = 0.0
    done: bool = False

    async def play(
        self,
        pool: EnvPool[Any, Any, Any],
        slot: int,
        toolset: Toolset,
        policy: Policy,
        plan: EvalPlan,
        task: Task,
        seed: int,
    ) -> None:
        first = _result(await pool.reset(slot, **task.reset))
        if plan.system_prompt:
            self.messages.append({"role": "system", "content": plan.system_prompt})
        shown = render_observation(first.observation)
        prompt = f"{task.prompt}\n\n{shown}" if task.prompt else shown
        self.messages.append({"role": "user", "content": prompt})
        while self.turns < plan.max_turns and not self.done:
            self.turns += 1
            asked = time.monotonic()
            reply = await policy(self.messages, toolset.tools, seed)
            self.policy_s += time.monotonic() - asked
            self.messages.append(reply)
            if not reply.get("tool_calls"):
                self.finish = "text"
                return
            for call in reply["tool_calls"]:
                await self._call(pool, slot, toolset, call)
                if self.done:
                    self.finish = "done"
                    return

    async def _call(
        self, pool: EnvPool[Any, Any, Any], slot: int, toolset: Toolset, call: dict[str, Any]
    ) -> None:
        name = call["function"]["name"]
        try:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            action = toolset.action(name, arguments if isinstance(arguments, dict) else {})
        except ValueError as exc:  # unknown tool or arguments that are not JSON: the model is told
            self._answer(call, name, f"Error: {exc}")
            return
        stepped = time.monotonic()
        result = _result(await pool.step(slot, action))
        observation = dict(result.observation)
        breakdown = (observation.get("metadata") or {}).get("reward_breakdown") or {}
        self.steps.append(
            {
                "action": action,
                "observation": observation,
                "reward": float(result.reward or 0.0),
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


def _result(result: Any) -> Any:
    if isinstance(result, SlotError):
        raise result.cause
    return result
