"""Forking a watched session's episode (the Sessions tab), gradio-free: the plan of a fork at a
step of the session's current or previous episode, from what the watch kept
(:class:`~openenv_hub.server.watch.WatchedEpisode`).

Where the server kept a snapshot after that step, the fork restores it (exact, whatever the
environment's randomness); otherwise it replays the episode from its reset, comparing each
reply the watch still holds (the reset's and the latest steps').

Layer: ui.
"""

from __future__ import annotations

from typing import Any

from openenv_hub.client.fork import ForkPlan
from openenv_hub.errors import EpisodeRecordError
from openenv_hub.server.watch import MAX_EPISODE_STEPS, WatchedEpisode, WatchedSession
from openenv_hub.ui.replay import Fork

__all__ = ["CURRENT", "EPISODE_CHOICES", "PREVIOUS", "watched_fork"]

#: What to do where a fork of a watched episode by replay is refused.
REFUSED_HINT = (
    "This server keeps no snapshot of that step: its environment does not implement "
    "snapshot() and restore(), the step was taken while nobody viewed the Sessions tab (it "
    "keeps snapshots while someone does, or while it records episodes), or the snapshot is "
    "no longer kept (the latest ones are). Fork a later step, or reset the episode with a "
    "seed to fork it by replay."
)

CURRENT = "Current episode"
PREVIOUS = "Previous episode"
EPISODE_CHOICES = [CURRENT, PREVIOUS]


def _chosen(
    watched: WatchedSession, which: str
) -> tuple[WatchedEpisode | None, WatchedEpisode | None]:
    if which == PREVIOUS:
        return watched.previous, watched.current
    return watched.current, watched.previous


def watched_fork(watched: WatchedSession, which: str, step: int) -> Fork:
    """The fork at ``step`` of ``watched``'s current or previous episode (``which``: one of
    :data:`EPISODE_CHOICES`); :class:`EpisodeRecordError` saying why when there is none."""
    episode, other = _chosen(watched, which)
    name = which.lower()
    if episode is None:
        raise EpisodeRecordError(
            f"Session {watched.session_id} has no {name} yet: pick the other episode, or wait "
            "until the session resets."
        )
    entry = episode.at(step)
    if entry is None:
        raise EpisodeRecordError(_not_in(watched, which, episode, other, step))
    if episode.restored and entry.snapshot is None:
        raise EpisodeRecordError(
            f"Episode {episode.number} began from a restored snapshot, not a reset, so it cannot "
            f"be replayed, and the server kept no snapshot of step {step}."
        )
    kept = episode.entries[: step - episode.first_step + 1]
    if episode.restored:
        payloads: list[dict[str, Any]] = [{} for _ in range(step)] + [entry.payload or {}]
        unchecked = frozenset(range(step)) | ({step} if entry.payload is None else set())
        plan = ForkPlan(step, {}, [], payloads, entry.snapshot)
    else:
        payloads = [e.payload or {} for e in kept]
        unchecked = frozenset(e.step for e in kept if e.payload is None)
        actions = [_as_sent(e.action) for e in kept[1:]]
        plan = ForkPlan(
            step, dict(kept[0].action), actions, payloads, entry.snapshot,
            replay_refusal=episode.replay_refusal, digests=tuple(e.digest for e in kept),
        )  # fmt: skip
    origin = f"episode {episode.number} of session {watched.session_id} at step {step}"
    return Fork(
        plan, unchecked=unchecked, origin=origin, replayable=not episode.restored,
        refused_hint=REFUSED_HINT,
    )  # fmt: skip


def _not_in(
    watched: WatchedSession,
    which: str,
    episode: WatchedEpisode,
    other: WatchedEpisode | None,
    step: int,
) -> str:
    live = not watched.ended and episode is watched.current
    message = f"Step {step} is not in the {which.lower()}, {episode.summary(live=live)}."
    if not episode.complete and step > episode.last_step:
        message += f" The watch keeps the first {MAX_EPISODE_STEPS:,} steps of an episode."
    if other is not None and other.at(step) is not None:
        other_name = PREVIOUS if which == CURRENT else CURRENT
        other_live = not watched.ended and other is watched.current
        message += (
            f" The {other_name.lower()}, {other.summary(live=other_live)}, has it: "
            f'choose "{other_name}".'
        )
    return message


def _as_sent(action: dict[str, Any]) -> dict[str, Any]:
    """An action as a client sends it (an empty ``metadata`` left out)."""
    return {k: v for k, v in action.items() if not (k == "metadata" and not v)}
