"""Recorded episodes in the web UI, gradio-free: reading a trajectory file, a dataset on the Hub
or the server's own recording into episodes, what one recorded step shows, and forking an
episode into a tab's Playground session.

A fork restores the snapshot the server kept at that step when the record names one it still
holds (exact, in one call; see :mod:`openenv_hub.server.snapshots`). Otherwise it replays the
recording on the tab's own session through the session core (reset with the recorded
parameters, then each recorded action). Either way every reply is checked against the
recording with the same plan as ``client.fork`` (the environment's state digests too, where
it gives them); where one differs, the fork stops there and the banner names the fields that
differ, showing the observation received. An episode its environment said would not replay
exactly (no seed given) is refused before the replay, with the reason.

Layer: ui.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from openenv_hub.client.fork import ForkPlan
from openenv_hub.errors import EpisodeRecordError, ReplayMismatchError, ReplayRefusedError
from openenv_hub.server.sessions import SessionPool
from openenv_hub.trajectories import read_records, server_recorder
from openenv_hub.types import StepResult
from openenv_hub.ui.actions import Actions, Outcome, entry_of
from openenv_hub.ui.tabs import Tab

__all__ = [
    "Fork",
    "RecordedStep",
    "fork_into_tab",
    "group_episodes",
    "make_fork",
    "read_episodes",
    "recorded_step",
    "server_episodes",
]

Records = list[dict[str, Any]]

_REFUSED_HINT = (
    "Fork it on the server that recorded it while that server runs (it restores the snapshot "
    "it kept), or record the episode again with a seed."
)


def read_episodes(path: str | os.PathLike[str]) -> dict[str, Records]:
    """The episodes of a trajectory file, named ``"episode N · S steps"``, in file order."""
    return group_episodes(read_records(path))


def server_episodes(pool: SessionPool) -> dict[str, Records] | None:
    """The latest episodes the server recorded, the originals first, then the forks made by
    replay (None: it records none, or others' episodes may not be listed here: see
    :func:`~openenv_hub.server.watch.watch_rule`)."""
    recorder = server_recorder(pool.observers)
    if recorder is None or not pool.watch_rule().allowed:
        return None
    kept = [*recorder.recent, *recorder.recent_forks]
    return group_episodes([r for records in kept for r in records])


def group_episodes(records: Records) -> dict[str, Records]:
    """``records`` grouped into episodes, named ``"episode N · S steps"``, in order."""
    grouped: dict[str, Records] = {}
    for record in records:
        grouped.setdefault(str(record.get("episode_id")), []).append(record)
    named: dict[str, Records] = {}
    for records in grouped.values():
        records.sort(key=lambda r: int(r["step"]))
        last = records[-1]
        ending = (
            " · done" if last.get("done") else (" · truncated" if last.get("truncated") else "")
        )
        origin = records[0].get("forked_from")
        fork = f" · fork of {origin}" if origin else ""
        number = records[0].get("episode")
        named[f"episode {number}{fork} · {len(records) - 1} steps{ending}"] = records
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


def _reader(ignored: frozenset[str]) -> Callable[[dict[str, Any]], StepResult[Any]]:
    """How a reply is read for the comparison: as JSON reads it back, so recorded and replayed
    ones compare alike, less the ``ignored`` fields of the observation (its class's
    ``replay_ignores``: timings, say)."""

    def as_result(payload: dict[str, Any]) -> StepResult[Any]:
        observation = json.loads(json.dumps(payload.get("observation"), default=str))
        if isinstance(observation, dict) and ignored:
            observation = {k: v for k, v in observation.items() if k not in ignored}
        reward, done = payload.get("reward"), payload["done"]
        return StepResult(observation=observation, reward=reward, done=done)

    return as_result


@dataclass(frozen=True)
class Fork:
    """A fork to make: the plan, and which of its steps' replies are known to check against.

    Attributes:
        plan: What to restore or replay, and the replies recorded.
        unchecked: Steps whose reply is no longer known (the watch keeps the latest ones
            only): their replies are not compared; every other step's is.
        origin: What is forked, as the recording marks the fork (``"episode 3 at step 5"``).
        replayable: Whether the plan can be replayed when its snapshot cannot be restored (not
            for an episode that began from a restored snapshot: it has no reset).
        refused_hint: What to do instead, where a fork by replay is refused (the plan's
            ``replay_refusal``: the environment said the episode would not replay exactly).
    """

    plan: ForkPlan
    unchecked: frozenset[int] = frozenset()
    origin: str = ""
    replayable: bool = True
    refused_hint: str = _REFUSED_HINT


async def fork_into_tab(actions: Actions, key: str, records: Records, step: int) -> Outcome:
    """Bring the tab's session to ``records``' state at ``step``; the Playground then plays on
    from there (unless the episode ended at that step)."""
    try:
        plan = ForkPlan.of(records, step)
    except EpisodeRecordError as exc:
        return Outcome("error", "Cannot fork there", [exc.message], tab=actions.tabs.get(key))
    origin = f"episode {records[0].get('episode')} at step {step}"
    return await make_fork(actions, key, Fork(plan, origin=origin))


async def make_fork(actions: Actions, key: str, fork: Fork) -> Outcome:
    """Restore the snapshot ``fork`` names, or else replay it, on the tab's session, checking
    every known reply; the outcome says which way it was made."""
    pool, as_result, plan = actions.pool, _reader(actions.replay_ignores), fork.plan

    def check(step: int, payload: dict[str, Any]) -> None:
        if step not in fork.unchecked:
            plan.check(as_result, step, as_result(payload))

    async def body(tab: Tab, session: Any) -> Outcome:
        started = time.perf_counter()
        payload = await pool.restore(session, plan.snapshot) if plan.snapshot else None
        try:
            if payload is None and not fork.replayable:
                return Outcome("error", "Cannot fork there", [_forgotten(plan.step)])
            if payload is not None:
                shown = {"snapshot of step": plan.step}
                tab.record(entry_of(session, "restore", shown, payload, started), new_episode=True)
                check(plan.step, payload)
                how = "from the server's snapshot (restored exactly, nothing replayed)"
            else:
                plan.refuse_unless(allow_inexact_replay=False)
                payload = await _replay(pool, tab, session, fork, check)
                how = f"by replay ({_replayed(fork)})"
        except ReplayRefusedError as exc:
            details = [exc.message, fork.refused_hint]
            return Outcome("error", "Cannot fork by replay", details, tab=tab)
        except ReplayMismatchError as exc:
            differs = "Replay differs from the recording"
            if "observation" in exc.got:  # what the fork received
                outcome = await actions.shown(session, differs, exc.got)
            else:  # the state digest: the observation shown is the one received
                outcome = Outcome("error", differs, tab=tab, history_changed=True)
            outcome.status, outcome.details = "error", [exc.message, exc.hint]
            return outcome
        return await actions.shown(session, _forked(plan.step, how, payload), payload)

    return await actions.run(key, body)


def _forgotten(step: int) -> str:
    return (
        f"The server no longer keeps the snapshot of step {step} (it keeps the latest ones "
        "only, and forgets them when it restarts), and this episode began from a snapshot, "
        "so it cannot be replayed from a reset."
    )


def _replayed(fork: Fork) -> str:
    """How a replay went, for the banner: what was sent and what was compared."""
    count = len(fork.plan.actions)
    sent = f"reset and {count} recorded action{'s' if count != 1 else ''} sent again"
    if any(fork.plan.digests):
        sent += ", the environment's state digests compared"
    if not fork.unchecked:
        return f"{sent}, every reply as recorded"
    first, last = min(fork.unchecked), max(fork.unchecked)
    steps = f"step {first}" if first == last else f"steps {first} to {last}"
    return f"{sent}; the replies of {steps} are no longer kept and were not compared"


def _forked(step: int, how: str, payload: dict[str, Any]) -> str:
    """The banner of a fork made ``how`` at ``step``, whose reply is ``payload``."""
    if payload.get("done"):
        return (
            f"Forked at step {step} {how}. The episode ended at that step, so there is "
            "nothing to play on: press Reset to start a new episode."
        )
    return f"Forked at step {step} {how}: the session plays on from the recorded state."


async def _replay(
    pool: SessionPool,
    tab: Tab,
    session: Any,
    fork: Fork,
    check: Callable[[int, dict[str, Any]], None],
) -> dict[str, Any]:
    """Reset and step ``session`` as recorded, checking each reply with ``check``; the last
    reply."""
    plan = fork.plan
    recorder = server_recorder(pool.observers)
    if recorder is not None:  # the replay is a fork, not an episode of its own
        recorder.mark_fork(session.id, fork.origin or "a recorded episode")
    started = time.perf_counter()
    try:
        payload = await pool.reset(session, plan.reset_params)
    finally:
        if recorder is not None:
            recorder.mark_fork(session.id, None)
    tab.record(entry_of(session, "reset", plan.reset_params, payload, started), new_episode=True)
    check(0, payload)
    asks = plan.after_reset(asdict(await pool.replay_facts(session)), allow_inexact_replay=False)
    for index, sent in enumerate(plan.actions, start=1):
        started = time.perf_counter()
        payload = await pool.step(session, pool.parse_action(sent))
        tab.record(entry_of(session, "step", sent, payload, started))
        check(index, payload)
        if asks:
            plan.check_digest(index, asdict(await pool.replay_facts(session)))
    return payload
