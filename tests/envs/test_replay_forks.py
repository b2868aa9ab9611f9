"""Forks by replay that can be trusted: the reference environments' episodes replay from their
own reset (Atari's second episode of a session included), a replay that differs names the field
that differs, an episode its environment says would not replay (no seed) is refused before
anything is sent, the environment's state digest is compared step by step, and a fork says
whether it restored a snapshot or replayed."""

from __future__ import annotations

import json
import logging
import random
from typing import Any

import pytest
from atari_env import AtariAction, AtariEnv
from atari_env.models import AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from chess_env import ChessAction, ChessEnv
from chess_env.models import ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from finance_env import TradingAction, TradingEnv
from finance_env.models import TradingObservation, TradingState
from finance_env.server.environment import TradingEnvironment

from openenv_hub import create_app
from openenv_hub.errors import ReplayMismatchError, ReplayRefusedError
from openenv_hub.frames import decode_image, encode_image


def atari_app(**options: Any) -> Any:
    return create_app(
        AtariEnvironment, AtariAction, AtariObservation, state_cls=AtariState, **options
    )


def chess_app(**options: Any) -> Any:
    return create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState, **options
    )


def recent_episodes(server: Any) -> list[list[dict[str, Any]]]:
    (recorder,) = [o for o in server.pool.observers if hasattr(o, "recent")]
    return list(recorder.recent)


def without_snapshots(episode: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as a file or another server gives them: no snapshot to restore."""
    return [dict(record, snapshot=None) for record in episode]


def play_atari(url: str, seeds: list[int | None], steps: int = 12) -> None:
    """One session, one episode per seed, the same actions each time."""
    with AtariEnv(base_url=url).sync() as env:
        for seed in seeds:
            env.reset(seed=seed, game="breakout", frameskip=4)
            for index in range(steps):
                env.step(AtariAction(action=(1, 2, 3, 0)[index % 4]))
        env.reset(seed=0)  # the last episode is written when the next one starts


def observation_of(record: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(record["observation"]))


def test_the_second_atari_episode_of_a_session_forks_by_replay(serve: Any, tmp_path: Any) -> None:
    recording = serve(atari_app(trajectories=tmp_path / "a.jsonl"))
    play_atari(recording.url, [1, 1])
    first, second = recent_episodes(recording)[:2]
    # The frames since the game was loaded go on across episodes; the episode's own do not.
    assert observation_of(second[0])["frame_number"] > 0
    assert observation_of(second[0])["episode_frame_number"] == 0
    other = serve(atari_app())
    with AtariEnv(base_url=other.url).sync() as env:
        forked = env.fork(without_snapshots(second), 7)
        assert forked.method == "replay"
        assert (
            forked.observation.episode_frame_number
            == observation_of(second[7])["episode_frame_number"]
        )
        assert forked.digests_checked == 8  # the reset's and each step's
        after = env.step(AtariAction(action=json.loads(second[8]["action"])["action"]))
        assert after.observation.lives == observation_of(second[8])["lives"]
    assert second[7]["state_digest"] == first[7]["state_digest"]  # the same seed and actions


def test_a_replay_that_differs_names_the_field_and_shows_no_frame(
    serve: Any, tmp_path: Any
) -> None:
    recording = serve(atari_app(trajectories=tmp_path / "a.jsonl"))
    play_atari(recording.url, [3], steps=4)
    (episode,) = recent_episodes(recording)[:1]
    tampered = without_snapshots(episode)
    observation = observation_of(tampered[2])
    observation["episode_frame_number"] += 1
    tampered[2] = dict(tampered[2], observation=json.dumps(observation))
    other = serve(atari_app())
    with AtariEnv(base_url=other.url).sync() as env, pytest.raises(ReplayMismatchError) as raised:
        env.fork(tampered, 3)
    error = raised.value
    assert error.fields == ["observation.episode_frame_number"]
    recorded = observation["episode_frame_number"]
    assert str(error).startswith(
        f"observation.episode_frame_number differs at step 2: recorded {recorded}, "
        f"replayed {recorded - 1}"
    ), str(error)
    assert "iVBOR" not in str(error) and "not deterministic" not in str(error) + error.hint
    # Where the frame itself differs, the message names it and gives its length, not its text.
    frame = observation_of(episode[1])
    pixels = decode_image(frame["frame"]).copy()
    pixels[100:110, 50:60] = 255  # a white square the game never drew
    frame["frame"] = encode_image(pixels)
    altered = without_snapshots(episode)
    altered[1] = dict(altered[1], observation=json.dumps(frame))
    with AtariEnv(base_url=other.url).sync() as env, pytest.raises(ReplayMismatchError) as raised:
        env.fork(altered, 2)
    message = str(raised.value)
    assert raised.value.fields == ["observation.frame"]
    assert "observation.frame differs at step 1: recorded <a PNG image of" in message, message
    assert "iVBOR" not in message and len(message) < 300


def test_an_unseeded_atari_episode_is_refused_before_replay(serve: Any, tmp_path: Any) -> None:
    recording = serve(atari_app(trajectories=tmp_path / "a.jsonl"))
    play_atari(recording.url, [None], steps=6)
    (episode,) = recent_episodes(recording)[:1]
    assert "no seed was given at reset" in episode[0]["replay_refusal"]
    other = serve(atari_app(trajectories=tmp_path / "other.jsonl"))
    with AtariEnv(base_url=other.url).sync() as env:
        with pytest.raises(ReplayRefusedError, match="sticky actions") as raised:
            env.fork(without_snapshots(episode), 4)
        assert "allow_inexact_replay=True" in raised.value.hint
    assert recent_episodes(other) == []  # refused before anything was sent
    # Records that do not say (a client's recording, an older file): the replaying server says
    # so after the reset, and the fork stops there.
    unsaid = [dict(r, replay_refusal=None, state_digest=None) for r in without_snapshots(episode)]
    with (
        AtariEnv(base_url=serve(atari_app()).url).sync() as env,
        pytest.raises(ReplayRefusedError, match="no seed was given at reset"),
    ):
        env.fork(unsaid, 4)
    # On the server that recorded it, the fork restores its snapshot: exact, not refused.
    with AtariEnv(base_url=recording.url).sync() as env:
        forked = env.fork(episode, 4)
        assert forked.method == "snapshot"
        assert forked.how == "from the server's snapshot"


def test_a_replay_whose_hidden_state_differs_is_caught_by_the_digest(
    serve: Any, tmp_path: Any
) -> None:
    """The recorded seed no longer gives the recorded sticky-action generator (as if the
    environment drew from state the seed does not fix): the reset's observation is the same,
    so only the state digest tells, at once."""
    recording = serve(atari_app(trajectories=tmp_path / "a.jsonl"))
    play_atari(recording.url, [5], steps=6)
    (episode,) = recent_episodes(recording)[:1]
    reseeded = without_snapshots(episode)
    reseeded[0] = dict(
        reseeded[0], action=json.dumps(json.loads(episode[0]["action"]) | {"seed": 6})
    )
    other = serve(atari_app())
    with AtariEnv(base_url=other.url).sync() as env, pytest.raises(ReplayMismatchError) as raised:
        env.fork(reseeded, 0)
    assert raised.value.fields == ["state_digest"]
    assert str(raised.value).startswith("state_digest differs at step 0: recorded '")
    assert "own state does not" in raised.value.hint


def test_a_seeded_chess_game_replays_with_its_digests_and_an_unseeded_one_is_refused(
    serve: Any, tmp_path: Any
) -> None:
    recording = serve(chess_app(trajectories=tmp_path / "c.jsonl"))
    rng = random.Random(2)
    with ChessEnv(base_url=recording.url).sync() as env:
        for seed in (11, None):
            result = env.reset(seed=seed)
            for _ in range(6):
                result = env.step(ChessAction(move=rng.choice(result.observation.legal_moves)))
        env.reset(seed=0)
    seeded, unseeded = recent_episodes(recording)[:2]
    assert all(record["state_digest"] for record in seeded)
    assert seeded[0]["replay_refusal"] is None
    other = serve(chess_app())
    with ChessEnv(base_url=other.url).sync() as env:
        forked = env.fork(without_snapshots(seeded), 5)
        assert (forked.method, forked.digests_checked) == ("replay", 6)
        assert forked.how == "by replay of 5 steps (state digests checked)"
        with pytest.raises(ReplayRefusedError, match="random opponent's moves are drawn"):
            env.fork(without_snapshots(unseeded), 3)


def test_a_fork_logs_which_way_it_was_made(
    serve: Any, tmp_path: Any, caplog: pytest.LogCaptureFixture
) -> None:
    recording = serve(chess_app(trajectories=tmp_path / "c.jsonl"))
    with ChessEnv(base_url=recording.url).sync() as env:
        result = env.reset()
        for _ in range(3):
            result = env.step(ChessAction(move=result.observation.legal_moves[0]))
        env.reset()
    (game,) = recent_episodes(recording)[:1]
    with (
        caplog.at_level(logging.INFO, logger="openenv_hub.client"),
        ChessEnv(base_url=recording.url).sync() as env,
    ):
        assert env.fork(game, 2).method == "snapshot"
    assert "Forked at step 2 from the server's snapshot" in caplog.text


def test_a_trading_episode_replays_with_its_digests(serve: Any, tmp_path: Any) -> None:
    """Trading draws nothing at random: an unseeded episode replays, its digests checked."""
    app_of = lambda **options: create_app(  # noqa: E731
        TradingEnvironment, TradingAction, TradingObservation, state_cls=TradingState, **options
    )
    recording = serve(app_of(trajectories=tmp_path / "t.jsonl"))
    with TradingEnv(base_url=recording.url).sync() as env:
        result = env.reset(max_days=10)
        for day in range(5):
            count = len(result.observation.tickers) or 1
            result = env.step(TradingAction(actions=[(-1) ** day * 0.5] * count))
        env.reset()
    (episode,) = recent_episodes(recording)[:1]
    assert episode[0]["replay_refusal"] is None and all(r["state_digest"] for r in episode)
    other = serve(app_of())
    with TradingEnv(base_url=other.url).sync() as env:
        forked = env.fork(without_snapshots(episode), 4)
        assert (forked.method, forked.digests_checked) == ("replay", 5)
