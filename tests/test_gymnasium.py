"""Gymnasium environments served over /ws: spaces as schemas, bounds, seeds, frames."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import gymnasium as gym
import httpx
import numpy as np
import pytest
from gymnasium import spaces

from openenv_hub import GenericEnvClient, create_app
from openenv_hub.errors import (
    ActionValidationError,
    ConfigurationError,
    EnvironmentExecutionError,
)
from openenv_hub.gymnasium import GymnasiumEnvironment, GymnasiumFactory


class Arm(gym.Env[dict[str, Any], dict[str, Any]]):
    """A small environment with every kind of space, numpy info values and rgb frames."""

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.action_space = spaces.Dict(
            {
                "torque": spaces.Box(-1.0, 1.0, (2,), dtype=np.float32),
                "grip": spaces.Discrete(3, start=-1),
                "lights": spaces.MultiBinary(3),
                "gear": spaces.MultiDiscrete([3, 5]),
                "pair": spaces.Tuple((spaces.Discrete(2), spaces.Text(4))),
            }
        )
        self.observation_space = spaces.Dict(
            {
                "position": spaces.Box(-5.0, 5.0, (2,), dtype=np.float32),
                "camera": spaces.Box(0, 255, (24, 32, 3), dtype=np.uint8),
            }
        )
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self._t = 0
        return self._obs(), {"started": np.int64(1), "options": options}

    def step(self, action: dict[str, Any]) -> Any:
        assert self.action_space.contains(action), action
        self._t += 1
        info = {"torque": action["torque"], "speed": np.float32(0.5)}
        return self._obs(), float(action["grip"]), False, self._t >= 2, info

    def _obs(self) -> dict[str, Any]:
        camera = np.full((24, 32, 3), self._t * 40, dtype=np.uint8)
        return {"position": self.np_random.uniform(-1, 1, 2).astype(np.float32), "camera": camera}

    def render(self) -> Any:
        frame = np.zeros((20, 30, 3), dtype=np.uint8)
        frame[:, : 5 * (self._t + 1)] = 255
        return frame


ARM_ACTION = {
    "torque": [0.5, -0.25],
    "grip": 1,
    "lights": [1, 0, 1],
    "gear": [2, 4],
    "pair": [1, "ab"],
}


@pytest.fixture
def blackjack(serve: Any) -> Any:
    return serve(create_app(GymnasiumEnvironment.factory("Blackjack-v1")))


def play(url: str, seed: int, steps: int = 30) -> list[tuple[Any, Any, bool]]:
    """Reset with ``seed`` and always hit until the hand ends, then stick on the next ones."""
    Blackjack = GymnasiumEnvironment.factory("Blackjack-v1").client_class()
    trajectory = []
    with Blackjack(base_url=url).sync() as env:
        result = env.reset(seed=seed)
        for i in range(steps):
            if result.done:
                result = env.reset()
            result = env.step(Blackjack.action_type(action=i % 3 != 0))
            trajectory.append((result.observation.observation, result.reward, result.done))
    return trajectory


def test_blackjack_in_one_line_with_the_bounds_in_the_schema(blackjack: Any) -> None:
    schema = httpx.get(blackjack.url + "/schema").json()
    action = schema["action"]["properties"]["action"]
    assert (action["type"], action["minimum"], action["maximum"]) == ("integer", 0, 1)
    hand = schema["observation"]["properties"]["observation"]["anyOf"][0]
    assert [item["maximum"] for item in hand["prefixItems"]] == [31, 10, 1]


def test_the_same_seed_gives_the_same_trajectory(blackjack: Any) -> None:
    first, again = play(blackjack.url, seed=7), play(blackjack.url, seed=7)
    assert first == again
    assert any(play(blackjack.url, seed=seed) != first for seed in (8, 9, 10))
    assert any(done for _, _, done in first) and {r for _, r, done in first if done} <= {
        -1.0,
        0.0,
        1.0,
        1.5,
    }


async def test_an_out_of_space_action_is_a_validation_error_naming_the_bound(
    blackjack: Any,
) -> None:
    async with GenericEnvClient(blackjack.url) as env:
        await env.reset(seed=1)
        with pytest.raises(ActionValidationError, match="less than or equal to 1"):
            await env.step({"action": 2})
        assert (await env.step({"action": 0})).done is True  # the session goes on


async def test_every_kind_of_space_round_trips_and_boxes_name_their_bounds(serve: Any) -> None:
    factory = GymnasiumEnvironment.factory(Arm, render=True)
    server = serve(create_app(factory))
    Client = factory.client_class()
    async with Client(base_url=server.url) as env:
        first = await env.reset(seed=3, options={"level": 2})
        assert first.observation.info == {"started": 1, "options": {"level": 2}}
        assert first.observation.observation["camera"].shape == (24, 32, 3)
        assert first.observation.frame.shape == (20, 30, 3)
        result = await env.step(Client.action_type(action=ARM_ACTION))
        observation = result.observation
        assert observation.info == {"torque": [0.5, -0.25], "speed": 0.5}
        assert int(observation.observation["camera"][0, 0, 0]) == 40
        assert int(observation.frame[:, :10].min()) == 255 and int(observation.frame.max()) == 255
        assert (result.reward, observation.terminated, observation.truncated) == (1.0, False, False)
        last = await env.step(Client.action_type(action=ARM_ACTION))
        assert (last.done, last.observation.truncated, last.observation.terminated) == (
            True,
            True,
            False,
        )
        with pytest.raises(EnvironmentExecutionError, match="call reset"):
            await env.step(Client.action_type(action=ARM_ACTION))
    async with GenericEnvClient(server.url) as raw:
        await raw.reset()
        for field, bad, message in [
            ("torque", [1.5, 0.0], "torque\\[0\\] = 1.5 is above the upper bound 1.0"),
            ("grip", -2, "greater than or equal to -1"),
            ("gear", [2, 5], "gear\\[1\\] = 5 is above the upper bound 4"),
            ("lights", [1, 0], "expected shape \\(3,\\)"),
        ]:
            with pytest.raises(ActionValidationError, match=message):
                await raw.step({"action": {**ARM_ACTION, field: bad}})


def test_seeded_observations_match_the_environment_stepped_in_process(serve: Any) -> None:
    factory = GymnasiumEnvironment.factory("CartPole-v1", max_episode_steps=3)
    server = serve(create_app(factory))
    local = gym.make("CartPole-v1", max_episode_steps=3)
    expected, _ = local.reset(seed=11)
    with factory.client_class()(base_url=server.url).sync() as env:
        first = env.reset(seed=11).observation.observation
        assert first.dtype == np.float32 and np.array_equal(first, expected)
        for step in range(3):
            result = env.step(factory.action_cls(action=step % 2))
            expected, reward, terminated, truncated, _ = local.step(step % 2)
            assert result.observation.truncated == truncated
            assert np.array_equal(result.observation.observation, expected)
            assert (result.reward, result.observation.terminated) == (reward, terminated)
        assert result.observation.truncated is True and result.done is True


def test_an_instance_is_copied_for_each_session() -> None:
    template = gym.make("Blackjack-v1")
    factory = GymnasiumEnvironment.factory(template)
    one, two = factory(), factory()
    assert one.env is not two.env and one.env is not template
    assert one.reset(seed=1).observation == two.reset(seed=1).observation


def test_an_unknown_id_suggests_the_close_one() -> None:
    with pytest.raises(ConfigurationError, match="Did you mean: `Blackjack`"):
        GymnasiumEnvironment.factory("Blackjak-v1")


def test_a_function_must_return_a_gymnasium_env() -> None:
    with pytest.raises(ConfigurationError, match=r"not a gymnasium\.Env"):
        GymnasiumFactory(lambda: object())


def test_without_gymnasium_the_error_is_the_install_line() -> None:
    code = (
        "import sys; sys.modules['gymnasium'] = None\n"
        "from openenv_hub.gymnasium import GymnasiumEnvironment\n"
        "try:\n    GymnasiumEnvironment.factory('Blackjack-v1')\n"
        "except ImportError as exc:\n    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("DependencyNotInstalledError")
    assert 'pip install "openenv-hub[gymnasium]"' in out.stdout


def test_image_observations_of_an_ale_game_arrive_as_the_same_numpy_frames(serve: Any) -> None:
    options = {"frameskip": 4, "repeat_action_probability": 0.0}
    factory = GymnasiumEnvironment.factory("ALE/Breakout-v5", **options)
    schema = factory.observation_cls.model_json_schema()["properties"]["observation"]
    assert schema["anyOf"][0]["contentMediaType"] == "image/png"
    local = gym.make("ALE/Breakout-v5", **options)
    expected, _ = local.reset(seed=4)
    server = serve(create_app(factory))
    with factory.client_class()(base_url=server.url).sync() as env:
        frame = env.reset(seed=4).observation.observation
        assert frame.dtype == np.uint8 and np.array_equal(frame, expected)
        for action in (1, 2, 2, 3):
            expected, reward, *_ = local.step(action)
            result = env.step(factory.action_cls(action=action))
            assert np.array_equal(result.observation.observation, expected)
            assert result.reward == reward
