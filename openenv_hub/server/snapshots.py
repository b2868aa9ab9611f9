"""Snapshots of sessions' environments, kept on the server and addressed by opaque ids.

After a reset or step of an environment that implements
:meth:`~openenv_hub.environment.Environment.snapshot`, the session core takes a snapshot when an
observer wants one (the trajectory recorder, the session watch), keeps it here and tells that
observer its id. ``openenv/session/restore`` later brings a session of the same environment
class back to it (a fork at that step). A snapshot never leaves the server: a client only ever
holds its id, an unguessable random string, so what it can restore is a state the server
itself reached, never one it made up; nothing a client sends is unpickled or handed to
``restore``. The store keeps the latest :data:`MAX_SNAPSHOTS` and forgets older ones (a fork
of those falls back to replay).

Layer: server.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from openenv_hub.environment import Environment
from openenv_hub.rubrics.episode import EpisodeScorer

__all__ = [
    "MAX_SNAPSHOTS",
    "KeptSnapshot",
    "SnapshotStore",
    "can_snapshot",
    "restore_scorer",
    "scorer_progress",
]

MAX_SNAPSHOTS = 20_000


def can_snapshot(env: Environment[Any, Any, Any]) -> bool:
    """Whether ``env``'s class implements both ``snapshot`` and ``restore``."""
    cls = type(env)
    return cls.snapshot is not Environment.snapshot and cls.restore is not Environment.restore


@dataclass(frozen=True)
class KeptSnapshot:
    """A snapshot and what a session restored to it needs besides.

    Attributes:
        env_type: The environment's class: only a session of that class may restore it.
        state: What the environment's ``snapshot()`` returned.
        payload: The reply of the reset or step it was taken after.
        step_count: The session's steps in the episode at that point.
        scorer: The rubric's progress in the episode (None without a rubric).
    """

    env_type: type[Any]
    state: Any
    payload: dict[str, Any]
    step_count: int
    scorer: Any = None


class SnapshotStore:
    """The latest snapshots, by id (see the module's docstring)."""

    def __init__(self, limit: int = MAX_SNAPSHOTS) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, KeptSnapshot] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def add(self, kept: KeptSnapshot) -> str:
        """Keep ``kept`` and return its new id (the oldest one goes past the limit)."""
        snapshot_id = secrets.token_urlsafe(18)
        self._kept[snapshot_id] = kept
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)
        return snapshot_id

    def get(self, snapshot_id: Any) -> KeptSnapshot | None:
        """The snapshot ``snapshot_id`` names, or None (unknown, forgotten, or not an id)."""
        if not isinstance(snapshot_id, str):
            return None
        return self._kept.get(snapshot_id)


def scorer_progress(scorer: EpisodeScorer | None) -> Any:
    """A copy of a rubric's progress in the episode, for :class:`KeptSnapshot`."""
    return None if scorer is None else scorer.progress()


def restore_scorer(scorer: EpisodeScorer | None, progress: Any) -> None:
    if scorer is not None:
        if progress is None:
            scorer.reset()
        else:
            scorer.restore_progress(progress)
