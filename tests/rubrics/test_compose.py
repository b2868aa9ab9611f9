"""Composition arithmetic: weighted sums, all-of, any-of, gates, nested breakdowns."""

from __future__ import annotations

from typing import Any

import pytest

from openenv_hub import Observation
from openenv_hub.errors import ConfigurationError
from openenv_hub.rubrics import (
    AllOf,
    AnyOf,
    Gate,
    Rubric,
    Step,
    Trajectory,
    WeightedSum,
    observation_reward,
    rubric,
)


def constant(value: float, name: str) -> Rubric:
    @rubric(name=name)
    def score(action: Any) -> float:
        return value

    return score


class Counting(Rubric):
    """Scores ``value`` and counts how often it was asked (to see what a gate skips)."""

    def __init__(self, value: float, name: str) -> None:
        super().__init__(name=name)
        self.value, self.calls = value, 0

    def score(self, step: Step) -> float:
        self.calls += 1
        return self.value


def one_step(reward: float | None = None, done: bool = False) -> Trajectory:
    return Trajectory([Step(action={}, observation=Observation(reward=reward, done=done))])


def test_weighted_sum_multiplies_and_adds() -> None:
    total = WeightedSum([constant(1.0, "a"), constant(0.5, "b"), constant(-2, "c")], [0.2, 2, 0.5])
    scored = total.evaluate_sync(one_step())
    assert scored.reward == pytest.approx(0.2 * 1.0 + 2 * 0.5 + 0.5 * -2)
    assert scored.breakdown == {"a": 1.0, "b": 0.5, "c": -2.0}
    assert scored.delayed == 0.0


def test_weights_default_to_one_and_dicts_name_the_parts() -> None:
    total = WeightedSum({"first": constant(0.25, "x"), "second": constant(0.5, "x")})
    scored = total.evaluate_sync(one_step())
    assert scored.reward == 0.75
    assert scored.breakdown == {"first": 0.25, "second": 0.5}


@pytest.mark.parametrize(
    ("scores", "all_of", "any_of"),
    [([1, 1, 1], 1, 1), ([1, 0, 1], 0, 1), ([0, 0, 0], 0, 0), ([0.2, 0.9, 0.5], 0.2, 0.9)],
)
def test_all_of_is_the_minimum_and_any_of_the_maximum(
    scores: list[float], all_of: float, any_of: float
) -> None:
    parts = [constant(s, f"p{i}") for i, s in enumerate(scores)]
    assert AllOf(*parts).evaluate_sync(one_step()).reward == all_of
    assert AnyOf(*parts).evaluate_sync(one_step()).reward == any_of


@pytest.mark.parametrize(
    ("condition", "threshold", "reward", "judged"),
    [(1.0, 1.0, 0.7, 1), (0.6, 0.5, 0.7, 1), (0.4, 0.5, -1.0, 0), (0.0, 1.0, -1.0, 0)],
)
def test_a_gate_scores_its_rubric_only_when_open(
    condition: float, threshold: float, reward: float, judged: int
) -> None:
    expensive = Counting(0.7, "expensive")
    gate = Gate(constant(condition, "cheap"), expensive, threshold=threshold, otherwise=-1.0)
    scored = gate.evaluate_sync(one_step())
    assert scored.reward == reward
    assert expensive.calls == judged
    assert ("expensive" in scored.breakdown) == bool(judged)


def test_a_gate_without_a_rubric_passes_its_condition_through() -> None:
    assert Gate(constant(0.8, "c"), threshold=0.5).evaluate_sync(one_step()).reward == 0.8
    assert Gate(constant(0.3, "c"), threshold=0.5).evaluate_sync(one_step()).reward == 0.0


def test_nested_composites_report_dotted_paths_and_share_leaves() -> None:
    shared = Counting(1.0, "valid")
    quality = WeightedSum([constant(0.5, "style"), shared], [0.5, 0.5], name="quality")
    total = WeightedSum([Gate(shared, quality, name="gated"), shared], [1.0, 0.25])
    scored = total.evaluate_sync(one_step())
    assert scored.reward == pytest.approx(0.75 + 0.25)
    assert scored.breakdown == {
        "gated.valid": 1.0,
        "gated.quality.style": 0.5,
        "gated.quality.valid": 1.0,
        "gated.quality": 0.75,
        "gated": 0.75,
        "valid": 1.0,
    }
    assert shared.calls == 1  # a leaf is scored once per step, wherever it appears


def test_repeated_names_get_a_suffix() -> None:
    scored = AnyOf(constant(0.1, "score"), constant(0.2, "score")).evaluate_sync(one_step())
    assert scored.breakdown == {"score": 0.1, "score_2": 0.2}


def test_a_lone_rubric_is_its_own_breakdown_and_reads_the_env_reward() -> None:
    scored = observation_reward().evaluate_sync(one_step(reward=3))
    assert (scored.reward, scored.breakdown) == (3.0, {"env_reward": 3.0})
    assert observation_reward().evaluate_sync(one_step(reward=None)).reward == 0.0


async def test_async_rubrics_mix_with_plain_ones() -> None:
    @rubric
    async def remote(observation: Observation) -> float:
        return 0.25

    class AsyncClass(Rubric):
        async def score(self, step: Step) -> float:
            return 0.5

    scored = await WeightedSum([remote, AsyncClass(), constant(1, "local")]).evaluate(one_step())
    assert scored.reward == 1.75
    assert scored.breakdown == {"remote": 0.25, "async_class": 0.5, "local": 1.0}


def test_rubric_functions_get_action_observation_state_and_step_by_name() -> None:
    @rubric
    def everything(action: Any, observation: Any, state: Any, step: Step) -> float:
        return action["n"] + observation.reward + state["bonus"] + step.index

    step = Step(action={"n": 1}, observation=Observation(reward=2), state={"bonus": 4}, index=8)
    assert everything.evaluate_sync(Trajectory([step])).reward == 15


def test_mistakes_are_reported_clearly() -> None:
    with pytest.raises(ConfigurationError, match="2 rubrics and 1 weights"):
        WeightedSum([constant(1, "a"), constant(1, "b")], [1.0])
    with pytest.raises(ConfigurationError, match="wrap a function with @rubric"):
        AllOf(lambda step: 1.0)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="at least one rubric"):
        AnyOf()
    with pytest.raises(TypeError, match=r"parameters must be named from \['action'"):

        @rubric
        def wrong(act: Any) -> float:
            return 1.0

    @rubric
    def text(action: Any) -> Any:
        return "high"

    with pytest.raises(TypeError, match="returned str; return a number"):
        text.evaluate_sync(one_step())
