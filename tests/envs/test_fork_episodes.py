"""``client.fork(episode, step)`` against the reference environments: a session of one's own at
a recorded episode's state, made by replaying the recording against a real server, with every
observation checked on the way."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment

from openenv_hub import create_app
from openenv_hub.errors import EpisodeRecordError, ReplayMismatchError
from openenv_hub.gymnasium import GymnasiumEnvironment
from openenv_hub.trajectories import read_records

BLACKJACK = GymnasiumEnvironment.factory("Blackjack-v1")
Blackjack = BLACKJACK.client_class()


def recorded(serve: Any, app_of: Any, play: Any, path: Path) -> list[dict[str, Any]]:
    """The records of the episodes ``play(url)`` drives on a server recording to ``path``."""
    server = serve(app_of(path))
    play(server.url)
    server.stop()
    return read_records(path)


def blackjack_hands(url: str) -> None:
    """Hit until the hand ends, for a few seeds: some hands take several steps."""
    with Blackjack(base_url=url).sync() as env:
        for seed in range(12):
            result = env.reset(seed=seed)
            while not result.done:
                result = env.step(Blackjack.action_type(action=1))


@pytest.fixture
def blackjack_episode(serve: Any, tmp_path: Path) -> list[dict[str, Any]]:
    """A recorded Blackjack hand of at least three steps after the reset."""
    records = recorded(
        serve,
        lambda p: create_app(BLACKJACK, trajectories=p),
        blackjack_hands,
        tmp_path / "b.jsonl",
    )
    episodes = [[r for r in records if r["episode"] == n] for n in range(12)]
    return max(episodes, key=len)


def test_a_blackjack_fork_plays_on_as_the_recording_did(
    serve: Any, blackjack_episode: list[dict[str, Any]]
) -> None:
    assert len(blackjack_episode) >= 3
    server = serve(create_app(BLACKJACK))
    for step in range(len(blackjack_episode) - 1):
        with Blackjack(base_url=server.url).sync() as env:
            forked = env.fork(blackjack_episode, step)
            assert list(forked.observation.observation) == recorded_observation(
                blackjack_episode, step
            )
            following = blackjack_episode[step + 1]
            result = env.step(Blackjack.action_type(**json.loads(following["action"])))
            assert list(result.observation.observation) == recorded_observation(
                blackjack_episode, step + 1
            )
            assert (result.reward, result.done) == (following["reward"], following["done"])


def recorded_observation(episode: list[dict[str, Any]], step: int) -> Any:
    return json.loads(episode[step]["observation"])["observation"]


def chess_games(url: str) -> None:
    """A game against the seeded random opponent, the agent's moves drawn by a seeded RNG."""
    rng = random.Random(5)
    with ChessEnv(base_url=url).sync() as env:
        result = env.reset(seed=11)
        for _ in range(12):
            result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
            if result.done:
                break


def chess_app(path: Path | None = None) -> Any:
    return create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, trajectories=path
    )


async def test_a_chess_fork_at_move_k_gets_the_recorded_reply_to_the_recorded_move(
    serve: Any, tmp_path: Path
) -> None:
    records = recorded(serve, chess_app, chess_games, tmp_path / "chess.jsonl")
    assert len(records) == 13, "the seeded game ends later than twelve moves"
    server = serve(chess_app())
    for step in (0, 5, 11):
        async with ChessEnv(base_url=server.url) as env:
            forked = await env.fork(records, step)
            assert forked.observation.fen == json.loads(records[step]["observation"])["fen"]
            following = json.loads(records[step + 1]["action"])
            result = await env.step(ChessAction(move=following["move"]))
            recorded_next = ChessObservation.model_validate(
                json.loads(records[step + 1]["observation"])
                | {"reward": records[step + 1]["reward"], "done": records[step + 1]["done"]}
            )
            assert result.observation == recorded_next


def test_a_replay_that_differs_from_the_recording_is_raised_at_its_step(
    serve: Any, blackjack_episode: list[dict[str, Any]]
) -> None:
    tampered = [dict(r) for r in blackjack_episode]
    observation = json.loads(tampered[1]["observation"])
    observation["observation"][0] += 1  # the player's sum, as if the cards had been others
    tampered[1]["observation"] = json.dumps(observation)
    server = serve(create_app(BLACKJACK))
    with Blackjack(base_url=server.url).sync() as env:
        env.fork(tampered, 0)  # before the change: fine
        with pytest.raises(
            ReplayMismatchError, match=r"observation\.observation differs at step 1: recorded \["
        ) as raised:
            env.fork(tampered, 2)
    assert raised.value.step == 1
    assert raised.value.expected["observation"]["observation"] == observation["observation"]
    assert raised.value.fields == ["observation.observation"]
    assert "Fork at an earlier step" in raised.value.hint


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda ep: ep, "Step 99 is not in the episode: it has steps 0 to"),
        (lambda ep: [], "has no records"),
        (lambda ep: ep[:1] + ep[2:], "without gaps"),
        (lambda ep: [*ep, dict(ep[0], episode_id="other")], "more than one episode"),
    ],
)
def test_records_that_are_not_one_episode_are_refused_before_any_call(
    blackjack_episode: list[dict[str, Any]], mangle: Any, message: str
) -> None:
    env = Blackjack(base_url="http://127.0.0.1:9").sync()  # nothing listens: no call is made
    with pytest.raises(EpisodeRecordError, match=message):
        env.fork(mangle(blackjack_episode), 99)
