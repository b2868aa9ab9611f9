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
    "RecordedStep",
    "fork_into_tab",
    "group_episodes",
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
    """The latest episodes the server recorded (None: it records none, or others' episodes
    may not be listed here: see :func:`~openenv_hub.server.watch.watch_rule`)."""
    recorder = server_recorder(pool.observers)
    if recorder is None or not pool.watch_rule().allowed:
        return None
    return group_episodes([r for records in recorder.recent for r in records])


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


async def fork_into_tab(actions: Actions, key: str, records: Records, step: int) -> Outcome:
    """Bring the tab's session to ``records``' state at ``step`` by replay; the Playground then
    plays on from there."""
    try:
        plan = ForkPlan.of(records, step)
    except EpisodeRecordError as exc:
        return Outcome("error", "Cannot fork there", [exc.message], tab=actions.tabs.get(key))
    pool, as_result = actions.pool, _reader(actions.replay_ignores)

    async def body(tab: Tab, session: Any) -> Outcome:
        started = time.perf_counter()
        payload = await pool.restore(session, plan.snapshot) if plan.snapshot else None
        how = "from the server's snapshot"
        try:
            if payload is not None:
                shown = {"snapshot of step": step}
                tab.record(entry_of(session, "restore", shown, payload, started), new_episode=True)
                plan.check(as_result, step, as_result(payload))
            else:
                plan.refuse_unless(allow_inexact_replay=False)
                how = "by replay"
                payload = await _replay(pool, tab, session, plan, as_result)
        except ReplayRefusedError as exc:
            return Outcome("error", "Cannot fork by replay", [exc.message, _REFUSED_HINT], tab=tab)
        except ReplayMismatchError as exc:
            differs = "Replay differs from the recording"
            if "observation" in exc.got:  # what the fork received
                outcome = await actions.shown(session, differs, exc.got)
            else:  # the state digest: the observation shown is the one received
                outcome = Outcome("error", differs, tab=tab, history_changed=True)
            outcome.status, outcome.details = "error", [exc.message, exc.hint]
            return outcome
        message = f"Forked at step {step} {how}: the session plays on from the recorded state."
        return await actions.shown(session, message, payload)

    return await actions.run(key, body)


async def _replay(
    pool: SessionPool,
    tab: Tab,
    session: Any,
    plan: ForkPlan,
    as_result: Callable[[dict[str, Any]], StepResult[Any]],
) -> dict[str, Any]:
    """Reset and step ``session`` as recorded, checking each reply (read by ``as_result``);
    the last reply."""
    started = time.perf_counter()
    payload = await pool.reset(session, plan.reset_params)
    tab.record(entry_of(session, "reset", plan.reset_params, payload, started), new_episode=True)
    plan.check(as_result, 0, as_result(payload))
    asks = plan.after_reset(asdict(await pool.replay_facts(session)), allow_inexact_replay=False)
    for index, sent in enumerate(plan.actions, start=1):
        started = time.perf_counter()
        payload = await pool.step(session, pool.parse_action(sent))
        tab.record(entry_of(session, "step", sent, payload, started))
        plan.check(as_result, index, as_result(payload))
        if asks:
            plan.check_digest(index, asdict(await pool.replay_facts(session)))
    return payload
