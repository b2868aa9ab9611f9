"""The Gymnasium adapter against an agent that tries to raise its own reward, through the real
server: values outside the action space (out of bounds, non-finite, huge, of the wrong type or
shape, text outside a Text space's charset), claimed rewards, actions after the episode ended,
oversized actions, steps before reset. The wrapped environment never sees an action outside its
space, every reward stays in the declared range, and a reward the environment puts outside it
is flagged."""

from __future__ import annotations

import logging
import math
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
    InvalidMessageError,
    ResetRequiredError,
)
from openenv_hub.gymnasium import GymnasiumEnvironment


class Auction(gym.Env[int, dict[str, Any]]):
    """Rewards the bid it is sent, so an agent would like to send a large one; declares its
    range the way Gymnasium environments did (``reward_range``). ``step`` asserts that the
    action is in the space: the adapter must never let one through that is not."""

    reward_range = (-1.0, 1.0)

    def __init__(self, render_mode: str | None = None, broken: bool = False) -> None:
        self.broken = broken
        self.action_space = spaces.Dict(
            {
                "bid": spaces.Box(-1.0, 1.0, (2,), dtype=np.float32),
                "lot": spaces.Discrete(3),
                "note": spaces.Text(8),
            }
        )
        self.observation_space = spaces.Discrete(10)
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self._t = 0
        return 0, {}

    def step(self, action: dict[str, Any]) -> Any:
        assert self.action_space.contains(action), action
        self._t += 1
        reward = float(np.mean(action["bid"]))
        if self.broken and action["lot"] == 2:
            reward = 5.0 if action["note"] != "nan" else math.nan
        return self._t, reward, False, self._t >= 3, {}


GOOD = {"bid": [0.5, 1.0], "lot": 1, "note": "hello"}


@pytest.fixture
def auction(serve: Any) -> Any:
    return serve(create_app(GymnasiumEnvironment.factory(Auction)))


def in_range(result: Any, low: float = -1.0, high: float = 1.0) -> float:
    assert result.reward is not None and low <= result.reward <= high, result.reward
    assert not (result.metadata or {}).get("reward_out_of_range")
    return float(result.reward)


def test_the_range_is_the_environments_own_or_the_one_given(auction: Any, serve: Any) -> None:
    assert httpx.get(auction.url + "/metadata").json()["reward_range"] == [-1.0, 1.0]
    blackjack = serve(create_app(GymnasiumEnvironment.factory("Blackjack-v1", reward_range=(-1, 1))))  # fmt: skip
    assert httpx.get(blackjack.url + "/metadata").json()["reward_range"] == [-1.0, 1.0]
    plain = serve(create_app(GymnasiumEnvironment.factory("CartPole-v1")))
    assert httpx.get(plain.url + "/metadata").json()["reward_range"] == [None, None]
    with pytest.raises(ConfigurationError, match="is empty"):
        GymnasiumEnvironment.factory("CartPole-v1", reward_range=(1, 0))


async def test_steps_and_state_before_reset_are_refused(auction: Any) -> None:
    async with GenericEnvClient(auction.url) as env:
        with pytest.raises(ResetRequiredError, match=r"call reset\(\) first"):
            await env.step({"action": GOOD})
        with pytest.raises(ResetRequiredError):
            await env.state()
        await env.reset(seed=1)
        assert in_range(await env.step({"action": GOOD})) == 0.75
    async with httpx.AsyncClient(base_url=auction.url) as http:
        reply = (await http.post("/step", json={"action": {"action": GOOD}})).json()
    assert reply["reward"] == 0.75  # a stateless step: its fresh environment was reset first


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("bid", [1e308, 0.0], "above the upper bound 1.0"),
        ("bid", [-(10**30), 0.0], "below the lower bound -1.0"),
        ("bid", ["1.0", "1.0"], "expected numbers"),
        ("bid", [None, 0.0], "expected numbers"),
        ("bid", [1.0], r"expected shape \(2,\)"),
        ("bid", [1.0] * 1_000_000, r"expected shape \(2,\)"),
        ("bid", [[1.0, 1.0]], r"expected shape \(2,\)"),
        ("bid", {"a": 1}, "expected"),
        ("lot", 3, "less than or equal to 2"),
        ("lot", -1, "greater than or equal to 0"),
        ("lot", 10**30, "less than or equal to 2"),
        ("lot", 1.5, "valid integer"),
        ("lot", "two", "valid integer"),
        ("note", "x" * 10_000, "at most 8 characters"),
        ("note", "", "at least 1 character"),
        ("note", "a b!", "not in the charset"),
        ("note", 12, "valid string"),
    ],
)
async def test_values_outside_the_action_space_never_reach_the_environment(
    auction: Any, field: str, value: Any, message: str
) -> None:
    async with GenericEnvClient(auction.url) as env:
        await env.reset(seed=2)
        with pytest.raises(ActionValidationError, match=message):
            await env.step({"action": {**GOOD, field: value}})
        assert (await env.state())["step_count"] == 0
        in_range(await env.step({"action": GOOD}))  # the session goes on


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
async def test_numbers_json_cannot_carry_are_refused_as_such(auction: Any, number: float) -> None:
    async with GenericEnvClient(auction.url) as env:
        await env.reset()
        with pytest.raises(InvalidMessageError, match="Invalid JSON"):
            await env.step({"action": {**GOOD, "bid": [number, 0.0]}})
    async with httpx.AsyncClient(base_url=auction.url) as http:
        stateless = await http.post(
            "/step",
            content=b'{"action": {"action": {"bid": [NaN, 0], "lot": 1, "note": "a"}}}',
            headers={"content-type": "application/json"},
        )
    assert stateless.status_code == 422


@pytest.mark.parametrize(
    "action",
    [
        {"action": {**GOOD, "reward": 100}},
        {"action": {"bid": [1.0, 1.0], "lot": 1}},
        {"action": GOOD, "reward": 100},
        {"action": GOOD, "done": True},
        {"reward": 100},
    ],
    ids=["key-in-dict", "missing-key", "reward-field", "done-field", "no-action"],
)
async def test_claimed_rewards_and_missing_parts_are_validation_errors(
    auction: Any, action: dict[str, Any]
) -> None:
    async with GenericEnvClient(auction.url) as env:
        await env.reset()
        with pytest.raises(ActionValidationError):
            await env.step(action)


async def test_an_episode_that_ended_takes_no_more_actions(auction: Any) -> None:
    async with GenericEnvClient(auction.url) as env:
        await env.reset(seed=3)
        results = [await env.step({"action": GOOD}) for _ in range(3)]
        assert [r.done for r in results] == [False, False, True]
        for _ in range(2):
            with pytest.raises(ResetRequiredError, match="episode ended"):
                await env.step({"action": {**GOOD, "bid": [1.0, 1.0]}})
        assert (await env.state())["episode_return"] == pytest.approx(2.25)


async def test_random_actions_of_the_space_stay_in_the_range(auction: Any) -> None:
    space = Auction().action_space
    space.seed(4)
    async with GenericEnvClient(auction.url) as env:
        await env.reset(seed=4)
        for _ in range(60):
            sample = space.sample()
            action = {"bid": sample["bid"].tolist(), "lot": int(sample["lot"]), "note": sample["note"]}  # fmt: skip
            result = await env.step({"action": action})
            in_range(result)
            if result.done:
                await env.reset()


async def test_a_reward_the_environment_puts_outside_its_range_is_flagged(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(create_app(GymnasiumEnvironment.factory(Auction, broken=True)))
    with caplog.at_level(logging.WARNING, logger="openenv_hub.server"):
        async with GenericEnvClient(server.url) as env:
            await env.reset()
            assert in_range(await env.step({"action": GOOD})) == 0.75
            for note in ("cheat", "nan"):
                result = await env.step({"action": {**GOOD, "lot": 2, "note": note}})
                assert result.metadata["reward_out_of_range"] is True
    warnings = [r for r in caplog.records if "outside its declared range" in r.getMessage()]
    assert len(warnings) == 1 and "Auction" in warnings[0].getMessage()
