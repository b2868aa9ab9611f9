"""An agent that tries to raise its own reward, through the real server: action ids outside the
action set, numbers that are not ids, frame-skip abuse at reset and at step, actions after the
episode ended, oversized requests, steps before reset. The reward is only ever the score the
emulator counted (a whole number; the declared range is the game's, ``(-inf, inf)``), and every
refusal is a typed error that says what was wrong."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import numpy as np
import pytest
import uvicorn
from atari_env import AtariAction, AtariEnv
from atari_env.server.app import app

from openenv_hub import GenericEnvClient
from openenv_hub.errors import ActionValidationError, EnvironmentExecutionError, ResetRequiredError


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    """The app served by a real uvicorn on a free port, in a thread."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def scored(result: Any) -> float:
    """The reward of ``result``: a finite whole number the emulator counted, never flagged."""
    reward = result.reward
    assert reward is not None and math.isfinite(reward) and reward == int(reward), reward
    assert not (result.metadata or {}).get("reward_out_of_range")
    return float(reward)


def test_the_declared_range_is_published(base_url: str) -> None:
    metadata = httpx.get(base_url + "/metadata").json()
    assert metadata["reward_range"] == [None, None]
    assert metadata["name"] == "atari_env" and "Atari 2600" in metadata["description"]


def test_steps_and_state_before_reset_are_refused(base_url: str) -> None:
    with AtariEnv(base_url=base_url).sync() as env:
        with pytest.raises(ResetRequiredError, match=r"call reset\(\) first"):
            env.step(AtariAction(action=1))
        with pytest.raises(ResetRequiredError):
            env.state()
        env.reset(game="breakout", seed=0)
        scored(env.step(AtariAction(action=1)))


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (-1, "greater than or equal to 0"),
        (18, "less than or equal to 17"),
        (10**30, "less than or equal to 17"),
        (1e308, "exceeded maximum size"),
        (3.5, "valid integer"),
        ("FIRE", "valid integer"),
        (None, "valid integer"),
        ([1], "valid integer"),
        (4, "not in the action set of breakout"),
        (17, "not in the action set of breakout"),
    ],
)
def test_action_ids_outside_the_action_set_are_validation_errors(
    base_url: str, action: Any, message: str
) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset(game="breakout", seed=1)
        with pytest.raises(ActionValidationError, match=message) as caught:
            env.step({"action": action})
        assert caught.value.errors[0]["loc"] == ["action"]
        frames = env.state()["episode_frame_number"]
        scored(env.step({"action": 0}))  # nothing was played, and the episode goes on
        assert env.state()["episode_frame_number"] == frames + 4


def test_frame_skip_cannot_be_raised_from_a_step(base_url: str) -> None:
    with GenericEnvClient(base_url).sync() as env:
        env.reset(game="breakout", seed=2, frameskip=4)
        with pytest.raises(ActionValidationError, match="Extra inputs are not permitted"):
            env.step({"action": 0, "frameskip": 1000})
        with pytest.raises(ActionValidationError, match="Extra inputs are not permitted"):
            env.step({"action": 0, "reward": 1000})
    extra = {"action": {"action": 0}, "frameskip": 1000, "repeat": 1000, "reward": 1e9}
    reply = httpx.post(base_url + "/step", json=extra).json()  # extra request keys are dropped
    assert reply["observation"]["episode_frame_number"] == 4 and reply["reward"] == 0.0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"frameskip": 0}, "frameskip must be between 1 and 64"),
        ({"frameskip": 65}, "frameskip must be between 1 and 64"),
        ({"frameskip": 10**9}, "frameskip must be between 1 and 64"),
        ({"frameskip": 4.5}, "frameskip must be int"),
        ({"frameskip": "4"}, "frameskip must be int"),
        ({"frameskip": True}, "frameskip must be int"),
        ({"repeat_action_probability": 2}, "between 0 and 1"),
        ({"repeat_action_probability": "0.25"}, "repeat_action_probability must be int or float"),
        ({"max_episode_frames": 0}, "at least 1"),
        ({"game": 123}, "game must be str"),
        ({"game": "breakout; rm -rf /"}, "Unknown game"),
        ({"obs_type": "png"}, "obs_type must be one of"),
        ({"full_action_space": "yes"}, "full_action_space must be bool"),
        ({"mode": "hard"}, "mode must be int or None"),
        ({"reward_scale": 100}, "Unknown reset argument"),
    ],
)
def test_settings_that_cannot_work_are_refused_by_name(
    base_url: str, settings: dict[str, Any], message: str
) -> None:
    with AtariEnv(base_url=base_url).sync() as env:
        with pytest.raises(EnvironmentExecutionError, match=message):
            env.reset(**{"game": "breakout", **settings})
        assert env.reset(game="breakout", frameskip=4).observation.lives == 5


def test_an_episode_that_ended_takes_no_more_actions(base_url: str) -> None:
    with AtariEnv(base_url=base_url).sync() as env:
        env.reset(game="breakout", max_episode_frames=8, frameskip=4, seed=3)
        results = [env.step(AtariAction(action=1)) for _ in range(2)]
        assert [r.done for r in results] == [False, True] and results[-1].observation.truncated
        for action in (0, 1, 3):
            with pytest.raises(ResetRequiredError, match="episode is over"):
                env.step(AtariAction(action=action))
        assert env.state().step_count == 2


def test_oversized_requests_are_refused_before_they_are_read(base_url: str) -> None:
    body = b'{"action": {"action": 1, "metadata": {"x": "' + b"y" * (17 * 2**20) + b'"}}}'
    reply = httpx.post(
        base_url + "/step", content=body, headers={"content-type": "application/json"}
    )
    assert reply.status_code == 413 and "limit" in reply.text


@pytest.mark.parametrize("game", ["pong", "breakout"])
def test_whole_episodes_of_hostile_play_score_only_what_the_emulator_counted(
    base_url: str, game: str
) -> None:
    """Every reward is a finite whole number (Pong's in -1, 0, 1), and they add up to the
    episode's return."""
    rng = np.random.default_rng(5)
    with AtariEnv(base_url=base_url).sync() as env:
        first = env.reset(game=game, seed=5, frameskip=8, max_episode_frames=4000)
        count = len(first.observation.action_meanings)
        rewards, result = [], first
        while not result.done:
            result = env.step(AtariAction(action=int(rng.integers(count))))
            rewards.append(scored(result))
        assert env.state().episode_return == sum(rewards)
    if game == "pong":
        assert set(rewards) <= {-1.0, 0.0, 1.0} and -1.0 in rewards
