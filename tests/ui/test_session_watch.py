"""The session watch: what it keeps of sessions driven through the session core, the setting
that allows it, and what one refresh of a viewer costs the event loop."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

import pytest

from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.watch import (
    BIND_HOST_SETTING,
    LEGACY_WATCH_SETTING,
    MAX_WATCHED_STEPS,
    WATCH_SETTING,
    SessionWatch,
    watch_rule,
    watching_allowed,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

from ui_envs import TypedEchoAction, TypedEchoEnvironment


async def test_the_watch_keeps_episodes_steps_return_and_the_end_of_a_session() -> None:
    pool = SessionPool(TypedEchoEnvironment, action_cls=TypedEchoAction)
    watch = SessionWatch()
    pool.observers.append(watch)
    session = await pool.open()
    try:
        await pool.reset(session, {"seed": 1})
        for message in ("ab", "abcd"):
            await pool.step(session, TypedEchoAction(message=message))
        watched = watch.sessions[session.id]
        assert (watched.episodes, watched.steps, watched.return_so_far) == (
            1,
            2,
            pytest.approx(0.6),
        )
        assert [e.action for e in watched.since(1)] == [
            {"message": "ab", "metadata": {}},
            {"message": "abcd", "metadata": {}},
        ]
        await pool.reset(session, {})
        assert (watched.episodes, watched.steps, watched.return_so_far) == (2, 0, 0.0)
        assert session.step_count == 0  # watching changed nothing in the session
    finally:
        await pool.close(session)
        await pool.aclose()
    assert watch.sessions[session.id].ended


@pytest.mark.parametrize(
    ("environ", "allowed"),
    [
        ({BIND_HOST_SETTING: "127.0.0.1"}, True),
        ({BIND_HOST_SETTING: "::1"}, True),
        ({BIND_HOST_SETTING: "localhost"}, True),
        ({}, False),  # served by something that does not say where it is bound
        ({BIND_HOST_SETTING: "0.0.0.0"}, False),
        ({BIND_HOST_SETTING: "192.168.1.20"}, False),
        ({BIND_HOST_SETTING: "127.0.0.1", "SPACE_ID": "me/env"}, False),
        ({BIND_HOST_SETTING: "0.0.0.0", WATCH_SETTING: "1"}, True),
        ({"SPACE_ID": "me/env", WATCH_SETTING: "1"}, True),
        ({BIND_HOST_SETTING: "127.0.0.1", WATCH_SETTING: "off"}, False),
        ({BIND_HOST_SETTING: "127.0.0.1", LEGACY_WATCH_SETTING: "0"}, False),
        ({BIND_HOST_SETTING: "0.0.0.0", LEGACY_WATCH_SETTING: "1"}, True),
    ],
)
def test_watching_is_on_for_a_loopback_server_only_unless_set(
    environ: dict[str, str], allowed: bool
) -> None:
    assert watching_allowed(environ) is allowed


def test_an_explicit_choice_wins_and_on_for_a_shared_server_is_flagged() -> None:
    shared = watch_rule(True, "0.0.0.0", {})
    assert (shared.allowed, shared.shared) == (True, True)
    local = watch_rule(True, "127.0.0.1", {})
    assert (local.allowed, local.shared) == (True, False)
    assert not watch_rule(False, "127.0.0.1", {WATCH_SETTING: "1"}).allowed
    refused = watch_rule(None, "0.0.0.0", {})
    assert "bound to 0.0.0.0" in refused.reason


@pytest.mark.serial
async def test_a_push_of_a_full_watch_takes_under_a_tenth_of_its_period() -> None:
    """A viewer's stream sends at most every PUSH_INTERVAL_S on the server's event loop: a push
    that takes under a tenth of that leaves steps at least nine tenths of the loop's time."""
    from openenv_hub.ui.watch_stream import PUSH_INTERVAL_S, SHOWN_STEPS, step_rows, watch_events

    pool = SessionPool(TypedEchoEnvironment, action_cls=TypedEchoAction)
    watch = SessionWatch()
    pool.observers.append(watch)
    session = await pool.open()
    try:
        await pool.reset(session, {})
        for n in range(MAX_WATCHED_STEPS + 10):
            await pool.step(session, TypedEchoAction(message=f"message {n}"))
        watched = watch.sessions[session.id]
        assert len(watched.recent) == MAX_WATCHED_STEPS  # bounded
        rows = step_rows(watched)  # a viewer is sent the latest few, the newest last
        assert len(rows) == SHOWN_STEPS < MAX_WATCHED_STEPS
        assert json.loads(rows[-1][3])["message"] == f"message {MAX_WATCHED_STEPS + 9}"
        took = []
        for _ in range(20):
            for entry in watched.recent:
                entry.row = None  # as if each push met steps never sent
            start = time.perf_counter()
            events = watch_events(pool, watch, session.id)
            await anext(events)  # the sessions table
            await anext(events)  # the steps and the latest observation
            took.append(time.perf_counter() - start)
            await events.aclose()
    finally:
        await pool.aclose()
    assert statistics.median(took) < PUSH_INTERVAL_S / 10, took


class SnapshotEcho(TypedEchoEnvironment):
    """The typed echo, with snapshots (its state is its step count)."""

    def snapshot(self) -> int:
        return self.state.step_count

    def restore(self, snapshot: int) -> None:
        self.state.step_count = snapshot


async def test_the_watch_keeps_each_episode_for_forks_past_the_steps_it_shows() -> None:
    """Every step's action and snapshot id, in the current and the previous episode; replies
    only of the reset and the latest MAX_WATCHED_STEPS steps. Snapshots are taken while someone
    views the sessions only."""
    from openenv_hub.server.watch import MAX_WATCHED_STEPS

    pool = SessionPool(SnapshotEcho, action_cls=TypedEchoAction)
    watch = SessionWatch()
    pool.observers.append(watch)
    session = await pool.open()
    try:
        await pool.reset(session, {"seed": 5})  # nobody views: no snapshot taken
        await pool.step(session, TypedEchoAction(message="first"))
        watch.viewing = 1  # as the Sessions tab's stream counts itself while open
        await pool.reset(session, {})
        for n in range(MAX_WATCHED_STEPS + 5):
            await pool.step(session, TypedEchoAction(message=f"m{n}"))
        watched = watch.sessions[session.id]
        previous, current = watched.previous, watched.current
        assert previous is not None and current is not None
        assert (previous.number, previous.last_step, previous.entries[0].action) == (
            1, 1, {"seed": 5},
        )  # fmt: skip
        assert (current.number, current.first_step, current.last_step) == (
            2, 0, MAX_WATCHED_STEPS + 5,
        )  # fmt: skip
        assert all(entry.snapshot for entry in current.entries)  # exact forks at every step
        assert not any(entry.snapshot for entry in previous.entries)
        early, late = current.at(3), current.at(MAX_WATCHED_STEPS + 5)
        assert early is not None and late is not None
        assert early.action["message"] == "m2" and early.payload is None  # reply let go
        assert late.payload is not None and current.entries[0].payload is not None
    finally:
        await pool.close(session)
        await pool.aclose()


async def test_forks_by_replay_are_recorded_as_forks_and_kept_apart_from_the_originals(
    tmp_path: Path,
) -> None:
    from openenv_hub.trajectories import TrajectoryWriter, read_records
    from openenv_hub.trajectories.server import RECENT_EPISODES, ServerRecorder

    recorder = ServerRecorder(TrajectoryWriter(tmp_path / "e.jsonl"), "echo", None)
    pool = SessionPool(TypedEchoEnvironment, action_cls=TypedEchoAction)
    pool.observers.append(recorder)
    session = await pool.open()
    try:
        for n in range(RECENT_EPISODES + 10):
            if n >= 3:  # the rest are replays for forks of episode 0
                recorder.mark_fork(session.id, "episode 0 at step 1")
            await pool.reset(session, {})
            await pool.step(session, TypedEchoAction(message=f"e{n}"))
        await pool.close(session)
    finally:
        await pool.aclose()
    recorder.close()
    assert [episode[0]["episode"] for episode in recorder.recent] == [0, 1, 2]
    assert len(recorder.recent_forks) == RECENT_EPISODES
    records = read_records(tmp_path / "e.jsonl")
    assert {r["forked_from"] for r in records if r["episode"] < 3} == {None}
    assert {r["forked_from"] for r in records if r["episode"] >= 3} == {"episode 0 at step 1"}
