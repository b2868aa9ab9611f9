"""Exact forks over the wire: a server that records episodes keeps a snapshot after every step of
an environment with ``snapshot()``/``restore()``, and ``client.fork`` restores it
(``openenv/session/restore``) instead of replaying. The recordings here are unseeded, so a replay
could not reproduce them: the session's next observation equals the recording's only because the
fork restored the very state, random generators included."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from atari_env import AtariAction, AtariEnv
from atari_env.models import AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment

from openenv_hub import GenericEnvClient, create_app
from openenv_hub.errors import ReplayMismatchError, ReplayRefusedError
from openenv_hub.gymnasium import GymnasiumEnvironment

BLACKJACK = GymnasiumEnvironment.factory("Blackjack-v1")
Blackjack = BLACKJACK.client_class()


def recent_episodes(server: Any) -> list[list[dict[str, Any]]]:
    """The episodes the running server recorded, as its web UI's Replay tab lists them."""
    (recorder,) = [o for o in server.pool.observers if hasattr(o, "recent")]
    return list(recorder.recent)


def recorded_reply(record: dict[str, Any]) -> dict[str, Any]:
    return json.loads(record["observation"]) | {"reward": record["reward"], "done": record["done"]}


def check_forks(server: Any, client: Any, episode: list[dict[str, Any]], action_of: Any) -> None:
    """At every step k, a fork gets step k's recorded reply, and the recorded action k+1 then
    gets step k+1's."""
    assert all(record["snapshot"] for record in episode)
    for step in range(len(episode) - 1):
        with client(base_url=server.url).sync() as env:
            forked = env.fork(episode, step)
            assert forked.observation.model_dump(mode="json") == recorded_reply(episode[step])
            following = episode[step + 1]
            result = env.step(action_of(json.loads(following["action"])))
            assert result.observation.model_dump(mode="json") == recorded_reply(following)


def test_an_unseeded_blackjack_hand_forks_exactly_at_every_step(serve: Any, tmp_path: Any) -> None:
    server = serve(create_app(BLACKJACK, trajectories=tmp_path / "b.jsonl"))
    with Blackjack(base_url=server.url).sync() as env:
        for _ in range(12):
            result = env.reset()
            while not result.done:
                result = env.step(Blackjack.action_type(action=1))
    hand = max(recent_episodes(server), key=len)
    assert len(hand) >= 3
    check_forks(server, Blackjack, hand, lambda sent: Blackjack.action_type(**sent))
    # The same records without their snapshots: a replay is refused before anything is sent,
    # since the deal was unseeded; replayed anyway, the unseeded deal differs.
    unsnapped = [dict(record, snapshot=None) for record in hand]
    with Blackjack(base_url=server.url).sync() as env:
        with pytest.raises(ReplayRefusedError, match="no seed was given at reset"):
            env.fork(unsnapped, len(hand) - 2)
        with pytest.raises(ReplayMismatchError):
            env.fork(unsnapped, len(hand) - 2, allow_inexact_replay=True)


def chess_app(**options: Any) -> Any:
    return create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, **options
    )


def test_an_unseeded_chess_game_forks_exactly(serve: Any, tmp_path: Any) -> None:
    """The random opponent's generator is unseeded: its replies after the fork are the recorded
    ones only because the snapshot holds the generator's state."""
    server = serve(chess_app(trajectories=tmp_path / "c.jsonl"))
    rng = random.Random(5)
    with ChessEnv(base_url=server.url).sync() as env:
        result = env.reset()
        for _ in range(8):
            result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
        env.reset()  # the game is written when the next one starts
    (game,) = recent_episodes(server)
    check_forks(server, ChessEnv, game, lambda sent: ChessAction(move=sent["move"]))


def test_an_atari_episode_with_unseeded_sticky_actions_forks_exactly(
    serve: Any, tmp_path: Any
) -> None:
    app = create_app(
        AtariEnvironment, AtariAction, AtariObservation, state_cls=AtariState,
        trajectories=tmp_path / "a.jsonl",
    )  # fmt: skip
    server = serve(app)
    with AtariEnv(base_url=server.url).sync() as env:
        env.reset(game="pong", repeat_action_probability=0.5)
        for n in range(6):
            env.step(AtariAction(action=n % 4))
        env.reset()
    episode = recent_episodes(server)[0]
    assert json.loads(episode[3]["observation"])["frame"]  # frames, as the wire carries them
    check_forks(server, AtariEnv, episode, lambda sent: AtariAction(action=sent["action"]))


def test_a_snapshot_another_server_took_falls_back_to_replay(serve: Any, tmp_path: Any) -> None:
    recording = serve(create_app(BLACKJACK, trajectories=tmp_path / "b.jsonl"))
    with Blackjack(base_url=recording.url).sync() as env:
        for seed in range(6):
            result = env.reset(seed=seed)
            while not result.done:
                result = env.step(Blackjack.action_type(action=1))
    hand = max(recent_episodes(recording), key=len)
    other = serve(create_app(BLACKJACK))  # knows none of its snapshots
    with Blackjack(base_url=other.url).sync() as env:
        forked = env.fork(hand, len(hand) - 2)  # seeded: the replay reproduces it
        assert forked.observation.model_dump(mode="json") == recorded_reply(hand[-2])


def test_restoring_takes_only_ids_of_snapshots_the_server_kept(serve: Any, tmp_path: Any) -> None:
    """A client can name a snapshot, never send one: a made-up id, a state in place of an id, or
    the id of another environment's snapshot are refused, and the session is left as it was."""
    server = serve(create_app(BLACKJACK, trajectories=tmp_path / "b.jsonl"))
    with Blackjack(base_url=server.url).sync() as env:
        env.reset(seed=3)
        env.step(Blackjack.action_type(action=0))
    kept = recent_episodes(server)[0][0]["snapshot"]
    other = serve(chess_app(trajectories=tmp_path / "c.jsonl"))
    with GenericEnvClient(base_url=other.url).sync() as env:
        before = env.reset(seed=1)
        for snapshot in ("made-up", {"board": "8/8/8/8/8/8/8/K6k w - - 0 1"}, kept):
            reply = env._request("mcp", restore_call(snapshot))
            assert reply["error"]["code"] == -32602, reply
            assert "snapshot" in reply["error"]["message"]
        assert env.state()["step_count"] == 0
        assert env.step({"move": before.observation["legal_moves"][0]}).reward == 0.0
    assert len(other.pool.snapshots) == 2  # only those of its own reset and step


def restore_call(snapshot: Any) -> dict[str, Any]:
    params = {"snapshot": snapshot}
    return {"jsonrpc": "2.0", "id": 7, "method": "openenv/session/restore", "params": params}
