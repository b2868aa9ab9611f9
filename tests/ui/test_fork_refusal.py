"""The web UI's fork (the Replay and Sessions tabs share it) refuses to replay an episode its
environment said would not replay exactly, with the reason, and checks the environment's state
digests where it replays: the same rules as ``client.fork``, without a browser."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from serving import ServerThread

from openenv_hub import create_app
from openenv_hub.server.sessions import SessionPool
from openenv_hub.trajectories import read_records
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.replay import fork_into_tab, group_episodes
from openenv_hub.ui.tabs import TabSessions


def record_games(path: Path) -> list[list[dict[str, Any]]]:
    """A seeded game and an unseeded one against the random opponent, recorded by a server
    that stops afterwards (so no snapshot can be restored)."""
    recorder = ServerThread(
        create_app(
            ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState,
            trajectories=path,
        )
    )  # fmt: skip
    recorder.start()
    try:
        rng = random.Random(3)
        with ChessEnv(base_url=recorder.url).sync() as env:
            for seed in (4, None):
                result = env.reset(seed=seed)
                for _ in range(4):
                    result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
    finally:
        recorder.stop()
    return list(group_episodes(read_records(path)).values())


async def test_the_ui_refuses_an_unseeded_replay_and_checks_digests_of_a_seeded_one(
    tmp_path: Path,
) -> None:
    seeded, unseeded = record_games(tmp_path / "games.jsonl")
    pool = SessionPool(ChessEnvironment, action_cls=ChessAction)
    try:
        actions = Actions(TabSessions(pool), replay_ignores=ChessObservation.replay_ignores)
        refused = await fork_into_tab(actions, "a", unseeded, 3)
        assert (refused.status, refused.message) == ("error", "Cannot fork by replay")
        assert "no seed was given at reset" in refused.details[0], refused.details
        assert "record the episode again with a seed" in refused.details[1]

        forked = await fork_into_tab(actions, "a", seeded, 3)
        assert forked.status == "ok", forked.details
        assert forked.message.startswith("Forked at step 3 by replay")
        assert forked.payload is not None
        assert forked.payload["observation"]["fen"] == json.loads(seeded[3]["observation"])["fen"]

        tampered = [dict(r) for r in seeded]
        tampered[2] = dict(tampered[2], state_digest="0" * 24)  # as if the state had been other
        differs = await fork_into_tab(actions, "a", tampered, 3)
        assert (differs.status, differs.message) == ("error", "Replay differs from the recording")
        assert differs.details[0].startswith("state_digest differs at step 2: recorded '000")
    finally:
        await pool.aclose()
