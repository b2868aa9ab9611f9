"""Recorded episodes in the web UI, gradio-free: reading a trajectory file into episodes, what
one recorded step shows, and forking an episode into a tab's Playground session.

A fork replays the recording on the tab's own session through the session core (reset with the
recorded parameters, then each recorded action), checking every reply against the recording
with the same plan as ``client.fork``; where a reply differs, the replay stops there and the
banner says so, showing the replayed observation.

Layer: ui.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from openenv_hub.client.fork import ForkPlan
from openenv_hub.errors import EpisodeRecordError, ReplayMismatchError
from openenv_hub.trajectories import read_records
from openenv_hub.types import StepResult
from openenv_hub.ui.actions import Actions, Outcome, entry_of
from openenv_hub.ui.tabs import Tab

__all__ = ["RecordedStep", "fork_into_tab", "read_episodes", "recorded_step"]

Records = list[dict[str, Any]]


def read_episodes(path: str | os.PathLike[str]) -> dict[str, Records]:
    """The episodes of a trajectory file, named ``"episode N · S steps"``, in file order."""
    grouped: dict[str, Records] = {}
    for record in read_records(path):
        grouped.setdefault(str(record.get("episode_id")), []).append(record)
    named: dict[str, Records] = {}
    for records in grouped.values():
        records.sort(key=lambda r: int(r["step"]))
        last = records[-1]
        ending = (
            " · done" if last.get("done") else (" · truncated" if last.get("truncated") else "")
        )
        named[f"episode {records[0].get('episode')} · {len(records) - 1} steps{ending}"] = records
    return named


@dataclass
class RecordedStep:
    """What one recorded step shows: its position line, its reply and its reward breakdown."""

    position: str
    payload: dict[str, Any]
    breakdown: dict[str, Any]


def recorded_step(records: Records, step: int) -> RecordedStep:
    """The recorded ``step`` of an episode (0 is the reset)."""
    record = records[step]
    action = json.loads(record["action"])
    called = "reset" if step == 0 else "step"
    position = f"Step {step} of {len(records) - 1} · {called}({json.dumps(action)})"
    payload = {
        "observation": json.loads(record["observation"]),
        "reward": record.get("reward"),
        "done": bool(record.get("done")),
    }
    return RecordedStep(position, payload, json.loads(record.get("reward_breakdown") or "{}"))


def _as_result(payload: dict[str, Any]) -> StepResult[Any]:
    """A reply as JSON reads it back, so recorded and replayed ones compare alike."""
    observation = json.loads(json.dumps(payload.get("observation"), default=str))
    return StepResult(observation=observation, reward=payload.get("reward"), done=payload["done"])


async def fork_into_tab(actions: Actions, key: str, records: Records, step: int) -> Outcome:
    """Bring the tab's session to ``records``' state at ``step`` by replay; the Playground then
    plays on from there."""
    try:
        plan = ForkPlan.of(records, step)
    except EpisodeRecordError as exc:
        return Outcome("error", "Cannot fork there", [exc.message], tab=actions.tabs.get(key))
    pool = actions.pool

    async def body(tab: Tab, session: Any) -> Outcome:
        started = time.perf_counter()
        payload = await pool.reset(session, plan.reset_params)
        tab.record(
            entry_of(session, "reset", plan.reset_params, payload, started), new_episode=True
        )
        try:
            plan.check(_as_result, 0, _as_result(payload))
            for index, sent in enumerate(plan.actions, start=1):
                started = time.perf_counter()
                payload = await pool.step(session, pool.parse_action(sent))
                tab.record(entry_of(session, "step", sent, payload, started))
                plan.check(_as_result, index, _as_result(payload))
        except ReplayMismatchError as exc:
            outcome = await actions.shown(session, "Replay differs from the recording", payload)
            outcome.status, outcome.details = "error", [exc.message, exc.hint]
            return outcome
        message = f"Forked at step {step}: the session plays on from the recorded state."
        return await actions.shown(session, message, payload)

    return await actions.run(key, body)
