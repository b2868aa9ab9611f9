"""Rescoring saved rollouts with the environment's current rubric, and no model.

Each rollout is replayed on a fresh session: the task's ``reset`` arguments, then the recorded
actions in order. The new rewards are compared with the recorded ones. A replay whose
observations (rewards and metadata aside) differ from the recorded ones shows the environment
is not deterministic under the task's reset arguments: that rollout is reported as such and its
rewards are not compared.

Layer: client.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from openenv_hub.client import EnvPool
from openenv_hub.errors import SlotError

__all__ = ["Rescored", "rescore_rows"]


@dataclass(frozen=True)
class Rescored:
    """One rollout, rescored.

    Attributes:
        split, task_key, sample: Which rollout.
        recorded: The rewards recorded.
        rescored: The rewards of the replay (empty when it could not be compared).
        problem: Why the rollout could not be rescored ("" when it was).
    """

    split: str
    task_key: str
    sample: int
    recorded: list[float]
    rescored: list[float]
    problem: str = ""

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


async def _replay(pool: EnvPool[Any, Any, Any], slot: int, row: dict[str, Any]) -> Rescored:
    steps = json.loads(row["steps"])
    recorded = [float(s["reward"]) for s in steps]
    which = {"split": row["split"], "task_key": row["task_key"], "sample": int(row["sample"])}
    if row.get("error"):
        return Rescored(**which, recorded=recorded, rescored=[], problem="the rollout failed")
    result = await pool.reset(slot, **json.loads(row["reset"]))
    if isinstance(result, SlotError):
        return Rescored(**which, recorded=recorded, rescored=[], problem=str(result))
    rewards = []
    for number, step in enumerate(steps, start=1):
        result = await pool.step(slot, step["action"])
        if isinstance(result, SlotError):
            return Rescored(**which, recorded=recorded, rescored=[], problem=str(result))
        if _visible(result.observation) != _visible(step["observation"]):
            problem = (
                f"not deterministic: the observation of step {number} differs from the recorded one"
            )
            return Rescored(**which, recorded=recorded, rescored=[], problem=problem)
        rewards.append(float(result.reward or 0.0))
    return Rescored(**which, recorded=recorded, rescored=rewards)


def _visible(observation: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in observation.items() if k not in ("reward", "metadata")}
