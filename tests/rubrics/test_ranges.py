"""Rubrics declare the range of their scores; composites derive theirs; environments publish it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from openenv_hub import Environment, Observation, State
from openenv_hub.errors import ConfigurationError
from openenv_hub.rubrics import (
    AllOf,
    AnyOf,
    Gate,
    Rubric,
    TrajectoryRubric,
    WeightedSum,
    observation_reward,
    rubric,
    trajectory_rubric,
)
from openenv_hub.rubrics.ranges import UNBOUNDED, contains, declared_reward_range, wire_range


@rubric(range=(0, 1))
def unit(observation: Observation) -> float:
    return 1.0


@rubric(range=(-1, 1))
def signed(observation: Observation) -> float:
    return -1.0


@rubric
def undeclared(observation: Observation) -> float:
    return 5.0


def test_a_rubric_that_declares_nothing_is_unbounded_as_before() -> None:
    assert undeclared.range == UNBOUNDED == (-math.inf, math.inf)
    assert Rubric(name="plain").range == UNBOUNDED
    assert observation_reward().range == UNBOUNDED
    assert TrajectoryRubric().range == UNBOUNDED


def test_each_kind_of_rubric_takes_a_range() -> None:
    @trajectory_rubric(range=(0, 10))
    def won(observation: Observation) -> float:
        return 10.0

    assert unit.range == (0.0, 1.0) and won.range == (0.0, 10.0)
    assert observation_reward(range=(-1, 1)).range == (-1.0, 1.0)
    assert TrajectoryRubric(range=(0, 2)).range == (0.0, 2.0)


@pytest.mark.parametrize(
    ("composite", "expected"),
    [
        (WeightedSum([unit, signed], weights=[0.5, 0.25]), (-0.25, 0.75)),
        (WeightedSum([unit, signed], weights=[2.0, -3.0]), (-3.0, 5.0)),
        (WeightedSum([unit, undeclared], weights=[1.0, 0.0]), (0.0, 1.0)),
        (WeightedSum([unit, undeclared]), UNBOUNDED),
        (AllOf(unit, signed), (-1.0, 1.0)),
        (AnyOf(unit, signed), (0.0, 1.0)),
        (Gate(unit, signed), (-1.0, 1.0)),
        (Gate(signed, threshold=0.5, otherwise=-2.0), (-2.0, 1.0)),
        (Gate(unit, threshold=2.0, otherwise=0.25), (0.25, 0.25)),
        (WeightedSum([unit, signed], range=(0, 0.5)), (0.0, 0.5)),
    ],
)
def test_composites_derive_their_range_from_their_parts(
    composite: Rubric, expected: tuple[float, float]
) -> None:
    assert composite.range == expected


@pytest.mark.parametrize(
    ("bad", "message"),
    [((1, 0), "is empty"), ((0, math.nan), "is empty"), ("ab", "pair"), ((0,), "pair")],
)
def test_a_range_that_cannot_be_one_is_refused(bad: Any, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        rubric(range=bad)(lambda observation: 0.0)


class _Plain(Environment[Any, Observation, State]):
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Any:
        return Observation()

    def step(self, action: Any, timeout_s: float | None = None, **kw: Any) -> Any:
        return Observation()

    @property
    def state(self) -> State:
        return State()


def test_an_environment_declares_its_range_or_takes_its_rubrics() -> None:
    class Declared(_Plain):
        reward_range = (-1, 1)

    class Scored(_Plain):
        rubric = WeightedSum([unit, unit], weights=[0.5, 0.5])

    class Both(Scored):
        reward_range = (0, 0.5)

    class Wrong(_Plain):
        reward_range = (2, 1)

    assert declared_reward_range(_Plain()) == UNBOUNDED
    assert declared_reward_range(Declared()) == (-1.0, 1.0)
    assert declared_reward_range(Scored()) == (0.0, 1.0)
    assert declared_reward_range(Both()) == (0.0, 0.5)
    with pytest.raises(ConfigurationError, match=r"Wrong\.reward_range"):
        declared_reward_range(Wrong())
    assert wire_range(UNBOUNDED) == [None, None] and wire_range((0.0, math.inf)) == [0.0, None]


def test_no_range_holds_a_nan_or_an_infinite_reward() -> None:
    assert contains(UNBOUNDED, -1e308) and contains((0.0, 1.0), 1.0)
    for reward in (math.nan, math.inf, -math.inf):
        assert not contains(UNBOUNDED, reward)
