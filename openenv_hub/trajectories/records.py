"""What a recorded episode is: one :class:`StepRecord` per reset and step, and the
:class:`EpisodeBuffer` that collects them until the episode ends.

Records are flat so that one table holds any environment's episodes: the action, the
observation and the reward breakdown are JSON text (actions of different kinds, or tools with
different arguments, share one column), everything else is a plain column. Read them back with
``datasets.load_dataset("json", data_files=...)`` (or ``"parquet"``), or :func:`read_records`.

Layer: client.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from openenv_hub.rubrics.episode import BREAKDOWN_KEY, STEP_REWARDS_KEY

__all__ = ["COLUMNS", "EpisodeBuffer", "StepRecord", "to_json"]


@dataclass
class StepRecord:
    """One row of a recorded trajectory.

    Attributes:
        env_name: The environment's name (from its ``/metadata``).
        env_version: Its version, when it reports one.
        episode_id: A unique id of the episode.
        episode: The episode's number in this recording (0, 1, ...).
        step: 0 for the reset, then 1, 2, ... for each step.
        action: The action as JSON text (the reset's parameters on step 0).
        observation: The observation as JSON text (``reward`` and ``done`` are columns).
        reward: The reward as the environment sent it (None when it sent none).
        done: Whether this step ended the episode.
        truncated: Whether the recording stopped the episode before it ended (step limit).
        reward_breakdown: The rubric's breakdown as JSON text (``"{}"`` without a rubric).
        attributed_reward: The reward credited to this step once the episode ended: the delayed
            reward spread back by the environment's ``reward_attribution``, else ``reward``.
        started_at: When the call was sent (seconds since the epoch).
        duration_ms: How long the environment took to answer.
        policy: The policy that chose the actions (``module:function``), when known.
        source: ``"client"`` or ``"server"``: which side recorded the step.
        snapshot: The id of the snapshot the recording server kept of the environment after
            this step, for an exact fork (None when it kept none; see
            :mod:`openenv_hub.server.snapshots`). Only that server, while it runs, knows it.
        state_digest: The environment's digest of its whole state after this step
            (:meth:`~openenv_hub.model.environment.Environment.state_digest`; None where it gives
            none). A fork by replay compares it step by step.
        replay_refusal: On the reset's record, why the episode would not replay exactly (the
            environment's :meth:`~openenv_hub.model.environment.Environment.replay_refusal`, e.g. no
            seed given); None where it would, or where the environment did not say.
        forked_from: For an episode that begins as a replay of another (a fork made in the web
            UI), what it forks (``"episode 3 at step 5"``); None for an original episode.
    """

    env_name: str
    env_version: str | None
    episode_id: str
    episode: int
    step: int
    action: str
    observation: str
    reward: float | None
    done: bool
    truncated: bool
    reward_breakdown: str
    attributed_reward: float | None
    started_at: float
    duration_ms: float
    policy: str | None
    source: str
    snapshot: str | None = None
    state_digest: str | None = None
    replay_refusal: str | None = None
    forked_from: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = [f for f in StepRecord.__dataclass_fields__]


def to_json(value: Any) -> str:
    """Compact JSON text of an action, observation or breakdown (pydantic models included)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _reward(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass
class EpisodeBuffer:
    """The records of one episode, held until it ends (so attributed rewards can be filled in).

    Args:
        env_name: The environment's name.
        env_version: Its version.
        episode: The episode's number in the recording.
        policy: The policy's name.
        source: ``"client"`` or ``"server"``.
        forked_from: What the episode replays, for a fork (see :class:`StepRecord`).
    """

    env_name: str
    env_version: str | None
    episode: int
    policy: str | None = None
    source: str = "client"
    forked_from: str | None = None
    episode_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    records: list[StepRecord] = field(default_factory=list)

    def add(
        self,
        action: Any,
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
        snapshot: str | None = None,
        state_digest: str | None = None,
        replay_refusal: str | None = None,
    ) -> StepRecord:
        """Record a reset (the first call) or a step from its wire payload
        (``{"observation", "reward", "done"}``), with the id of the snapshot kept after it and
        what the environment said of replaying it (see :class:`StepRecord`)."""
        observation = dict(payload.get("observation") or {})
        metadata = observation.get("metadata") or {}
        reward = _reward(payload.get("reward"))
        record = StepRecord(
            env_name=self.env_name,
            env_version=self.env_version,
            episode_id=self.episode_id,
            episode=self.episode,
            step=len(self.records),
            action=to_json(action),
            observation=to_json(observation),
            reward=reward,
            done=bool(payload.get("done")),
            truncated=False,
            reward_breakdown=to_json(metadata.get(BREAKDOWN_KEY) or {}),
            attributed_reward=reward,
            started_at=started_at,
            duration_ms=round(duration_s * 1000, 3),
            policy=self.policy,
            source=self.source,
            snapshot=snapshot,
            state_digest=state_digest,
            replay_refusal=replay_refusal,
            forked_from=self.forked_from,
        )
        self.records.append(record)
        if record.done:
            self._attribute(metadata.get(STEP_REWARDS_KEY))
        return record

    def _attribute(self, step_rewards: Any) -> None:
        """Credit the rewards the environment attributed to each step (reset excluded)."""
        steps = self.records[1:]
        if isinstance(step_rewards, list) and len(step_rewards) == len(steps):
            for record, value in zip(steps, step_rewards, strict=True):
                record.attributed_reward = _reward(value)

    def finish(self, *, truncated: bool = False) -> list[StepRecord]:
        """The episode's records; ``truncated`` marks the last one when the recording stopped
        it early."""
        if truncated and self.records:
            self.records[-1].truncated = True
        return self.records


def now() -> float:
    return time.time()
