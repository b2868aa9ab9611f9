"""Snapshots of sessions' environments, kept on the server and addressed by opaque ids.

After a reset or step of an environment that implements
:meth:`~openenv_hub.environment.Environment.snapshot`, the session core takes a snapshot when an
observer wants one (the trajectory recorder, the session watch), keeps it here and tells that
observer its id. ``openenv/session/restore`` later brings a session of the same environment
class back to it (a fork at that step). A snapshot never leaves the server: a client only ever
holds its id, an unguessable random string, so what it can restore is a state the server
itself reached, never one it made up; nothing a client sends is unpickled or handed to
``restore``. The store keeps the latest :data:`MAX_SNAPSHOTS`, within about
:data:`MAX_SNAPSHOT_BYTES` of memory (the replies' observations, images included, counted with
the states), and forgets older ones (a fork of those falls back to replay).

Layer: server.
"""

from __future__ import annotations

import secrets
import sys
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from openenv_hub.environment import Environment
from openenv_hub.rubrics.episode import EpisodeScorer
from openenv_hub.types import ReplayFacts

__all__ = [
    "MAX_SNAPSHOTS",
    "MAX_SNAPSHOT_BYTES",
    "KeptSnapshot",
    "SnapshotStore",
    "approximate_size",
    "can_snapshot",
    "read_replay_facts",
    "restore_scorer",
    "says_replay_facts",
    "scorer_progress",
]

MAX_SNAPSHOTS = 20_000
#: About how much memory the kept snapshots may take, as :func:`approximate_size` counts it.
MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024
#: Objects :func:`approximate_size` looks into, at most, for one value.
_MAX_VISITED = 10_000


def can_snapshot(env: Environment[Any, Any, Any]) -> bool:
    """Whether ``env``'s class implements both ``snapshot`` and ``restore``."""
    cls = type(env)
    return cls.snapshot is not Environment.snapshot and cls.restore is not Environment.restore


def says_replay_facts(env: Environment[Any, Any, Any]) -> bool:
    """Whether ``env``'s class implements ``state_digest`` or ``replay_refusal``."""
    cls = type(env)
    return (
        cls.state_digest is not Environment.state_digest
        or cls.replay_refusal is not Environment.replay_refusal
    )


def read_replay_facts(env: Environment[Any, Any, Any], after_reset: bool) -> ReplayFacts:
    """``env``'s state digest and, ``after_reset``, its replay refusal (each a short text)."""
    digest = env.state_digest()
    refusal = env.replay_refusal() if after_reset else None
    return ReplayFacts(
        None if digest is None else str(digest)[:128],
        None if refusal is None else str(refusal)[:500],
    )


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
    """The latest snapshots, by id (see the module's docstring).

    Args:
        limit: Snapshots kept at most.
        limit_bytes: About how much memory they may take; the latest one is kept whatever
            its size.
    """

    def __init__(self, limit: int = MAX_SNAPSHOTS, limit_bytes: int = MAX_SNAPSHOT_BYTES) -> None:
        self.limit = limit
        self.limit_bytes = limit_bytes
        self.size = 0  # bytes held, as approximate_size counts them
        self._kept: OrderedDict[str, tuple[KeptSnapshot, int]] = OrderedDict()  # with its size

    def __len__(self) -> int:
        return len(self._kept)

    def add(self, kept: KeptSnapshot) -> str:
        """Keep ``kept`` and return its new id (the oldest ones go past either limit)."""
        size = approximate_size(kept.state) + approximate_size(kept.payload)
        snapshot_id = secrets.token_urlsafe(18)
        self._kept[snapshot_id] = (kept, size)
        self.size += size
        while len(self._kept) > 1 and (
            len(self._kept) > self.limit or self.size > self.limit_bytes
        ):
            _, (_, forgotten) = self._kept.popitem(last=False)
            self.size -= forgotten
        return snapshot_id

    def get(self, snapshot_id: Any) -> KeptSnapshot | None:
        """The snapshot ``snapshot_id`` names, or None (unknown, forgotten, or not an id)."""
        if not isinstance(snapshot_id, str):
            return None
        found = self._kept.get(snapshot_id)
        return None if found is None else found[0]


def approximate_size(value: Any) -> int:
    """Roughly the bytes ``value`` holds: strings and bytes by their length, arrays by their
    ``nbytes``, containers and objects' attributes by what they hold, anything else by
    ``sys.getsizeof``. Looks into at most 10,000 objects (the rest counted by the average)."""
    total, visited, stack, seen = 0, 0, [value], set()
    while stack and visited < _MAX_VISITED:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        visited += 1
        if isinstance(item, (str, bytes, bytearray, memoryview)):
            total += len(item) + 48
        elif isinstance(getattr(item, "nbytes", None), int):
            total += item.nbytes + 96
        elif isinstance(item, dict):
            total += sys.getsizeof(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += sys.getsizeof(item)
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            total += sys.getsizeof(item)
            stack.append(vars(item))
        else:
            total += sys.getsizeof(item)
    if stack:  # not all looked into: count the rest as the average of what was
        total += len(stack) * (total // max(visited, 1))
    return total


def scorer_progress(scorer: EpisodeScorer | None) -> Any:
    """A copy of a rubric's progress in the episode, for :class:`KeptSnapshot`."""
    return None if scorer is None else scorer.progress()


def restore_scorer(scorer: EpisodeScorer | None, progress: Any) -> None:
    if scorer is not None:
        if progress is None:
            scorer.reset()
        else:
            scorer.restore_progress(progress)
