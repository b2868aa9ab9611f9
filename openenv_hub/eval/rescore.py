"""Rescoring saved rollouts with the environment's current rubric, and no model.

Each rollout is replayed on a fresh session: the task's ``reset`` arguments, then the recorded
actions in order, and the new rewards are compared with the recorded ones. A rubric reads what
an environment tells it of a step: the action, whether the episode is ``done``, and the facts in
the observation's ``metadata``. A replay whose observations differ elsewhere (a message worded
anew) while those are the same replayed the episode: it is rescored, and the fields that
changed are named. A replay whose ``done`` or metadata differ (rewards aside) played another
episode (the environment is not deterministic under the task's reset arguments, or its rules
changed): it is reported as such and its rewards are not compared. Rollouts that ended in an
infrastructure error are not replayed.

Layer: client.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from openenv_hub.client import EnvPool
from openenv_hub.errors import SlotError
from openenv_hub.rubrics.episode import BREAKDOWN_KEY, STEP_REWARDS_KEY

__all__ = ["Rescored", "rescore_rows", "rescored_rows"]

#: Metadata keys that are the rubric's output, not its input.
REWARD_KEYS = frozenset({BREAKDOWN_KEY, STEP_REWARDS_KEY, "reward", "rewards"})


@dataclass(frozen=True)
class Rescored:
    """One rollout, rescored.

    Attributes:
        split, task_key, sample: Which rollout.
        recorded: The rewards recorded.
        rescored: The rewards of the replay (empty when it could not be compared).
        problem: Why the rollout could not be rescored ("" when it was).
        text_changed: Observation fields that read differently in the replay, though the
            rubric's inputs were the same (the rollout was rescored).
    """

    split: str
    task_key: str
    sample: int
    recorded: list[float]
    rescored: list[float]
    problem: str = ""
    text_changed: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return not self.problem and [round(r, 9) for r in self.recorded] != [
            round(r, 9) for r in self.rescored
        ]

    @property
    def return_change(self) -> float:
        return sum(self.rescored) - sum(self.recorded)


async def rescore_rows(
    base_url: str, rows: list[dict[str, Any]], *, concurrency: int = 4
) -> list[Rescored]:
    """Replay every row's actions at ``base_url``; the results are in the order of ``rows``."""
    rescored: list[Rescored | None] = [None] * len(rows)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(rows)):
        queue.put_nowait(index)
    size = max(1, min(concurrency, len(rows)))

    async def worker(slot: int, pool: EnvPool[Any, Any, Any]) -> None:
        while not queue.empty():
            index = queue.get_nowait()
            rescored[index] = await _replay(pool, slot, rows[index])

    pool: EnvPool[Any, Any, Any]
    async with EnvPool(base_url, size=size) as pool:
        await asyncio.gather(*(worker(i, pool) for i in range(size)))
    return [r for r in rescored if r is not None]


def rescored_rows(
    rows: list[dict[str, Any]], rescored: list[Rescored], *, pass_threshold: float
) -> list[dict[str, Any]]:
    """``rows`` with the rewards, return and ``passed`` of each rollout that was rescored; a
    rollout that could not be replayed becomes an error row (it is counted in neither the mean
    nor pass@k, never with the reward it had before); error rows stay as they were."""
    out = []
    for row, again in zip(rows, rescored, strict=True):
        if row.get("finish") == "error":
            out.append(row)
            continue
        if again.problem:
            out.append(
                {
                    **row,
                    "return": None,
                    "passed": None,
                    "finish": "error",
                    "error": f"not rescored: {again.problem}",
                    "error_kind": "environment",
                }
            )
            continue
        total = float(sum(again.rescored))
        out.append(
            {**row, "rewards": again.rescored, "return": total, "passed": total >= pass_threshold}
        )
    return out


async def _replay(pool: EnvPool[Any, Any, Any], slot: int, row: dict[str, Any]) -> Rescored:
    steps = json.loads(row["steps"])
    recorded = [float(s["reward"]) for s in steps]
    which = {"split": row["split"], "task_key": row["task_key"], "sample": int(row["sample"])}
    if row.get("error") or row.get("finish") == "error":
        return Rescored(**which, recorded=recorded, rescored=[], problem="the rollout failed")
    result = await pool.reset(slot, **json.loads(row["reset"]))
    if isinstance(result, SlotError):
        return Rescored(**which, recorded=recorded, rescored=[], problem=str(result))
    rewards, changed = [], set()
    for number, step in enumerate(steps, start=1):
        result = await pool.step(slot, step["action"])
        if isinstance(result, SlotError):
            return Rescored(**which, recorded=recorded, rescored=[], problem=str(result))
        observation = dict(result.observation)
        differ = _rubric_inputs_differ(step, observation, bool(result.done))
        if differ:
            problem = (
                f"not replayed alike: the {differ} of step {number} differs from the recorded one"
            )
            return Rescored(**which, recorded=recorded, rescored=[], problem=problem)
        changed |= _text_changed(step["observation"], observation)
        rewards.append(float(result.reward or 0.0))
    return Rescored(
        **which, recorded=recorded, rescored=rewards, text_changed=tuple(sorted(changed))
    )


def _rubric_inputs_differ(step: dict[str, Any], observation: dict[str, Any], done: bool) -> str:
    """Which of the rubric's inputs differ ("" when none): ``done``, or the metadata."""
    if bool(step.get("done")) != done:
        return "end of the episode"
    if _facts(step["observation"]) != _facts(observation):
        return "metadata"
    return ""


def _facts(observation: dict[str, Any]) -> dict[str, Any]:
    metadata = observation.get("metadata") or {}
    return {k: v for k, v in metadata.items() if k not in REWARD_KEYS}


def _text_changed(recorded: dict[str, Any], replayed: dict[str, Any]) -> set[str]:
    skipped = {"reward", "metadata", "done"}
    names = (set(recorded) | set(replayed)) - skipped
    return {n for n in names if recorded.get(n) != replayed.get(n)}
