"""Delayed rewards: a trajectory rubric scores the episode when it ends, and the environment's
``reward_attribution`` credits that reward back to the steps that led to it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from openenv_hub import Observation
from openenv_hub.rubrics import (
    Discounted,
    FinalStep,
    Step,
    Trajectory,
    Uniform,
    WeightedSum,
    rubric,
    trajectory_rubric,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))

from word_game import Guess, WordGameEnv, app

SEED = 2  # the secret word is "crane"


async def test_the_win_is_credited_back_to_the_guesses_that_led_to_it(serve: Any) -> None:
    server = serve(app)
    async with WordGameEnv(base_url=server.url) as env:
        await env.reset(seed=SEED)
        results = [await env.step(Guess(word=w)) for w in ("xx", "slate", "crane")]
        state = await env.state()

    # On the wire: 0.1 per well-formed guess; the win (1.0) arrives with the last step.
    assert [r.reward for r in results] == pytest.approx([0.0, 0.1, 1.1])
    assert [r.done for r in results] == [False, False, True]
    assert results[0].metadata is not None
    assert results[0].metadata["reward_breakdown"] == {"well_formed": 0.0}
    final = results[-1].observation.metadata
    assert final["reward_breakdown"] == {"well_formed": 1.0, "solved": 1.0}
    # Discounted(0.5): the last guess gets the whole 1.0, each earlier one half its successor's.
    assert final["step_rewards"] == pytest.approx([0.0 + 0.25, 0.1 + 0.5, 0.1 + 1.0])
    rewards = state.model_extra["rewards"]  # type: ignore[index]
    assert rewards["step_rewards"] == pytest.approx([0.25, 0.6, 1.1])
    assert rewards["episode_return"] == pytest.approx(1.95)


async def test_a_lost_game_earns_only_the_step_rewards(serve: Any) -> None:
    server = serve(app)
    async with WordGameEnv(base_url=server.url) as env:
        await env.reset(seed=SEED)
        results = [await env.step(Guess(word="slate")) for _ in range(6)]
    assert [r.reward for r in results] == pytest.approx([0.1] * 6)
    assert results[-1].done
    assert results[-1].observation.metadata["step_rewards"] == pytest.approx([0.1] * 6)


@pytest.mark.parametrize(
    ("attribution", "expected"),
    [
        (FinalStep(), [0.1, 0.1, 0.1, 2.1]),
        (Uniform(), [0.6, 0.6, 0.6, 0.6]),
        (Discounted(1.0), [2.1, 2.1, 2.1, 2.1]),
        (Discounted(0.0), [0.1, 0.1, 0.1, 2.1]),
        (Discounted(0.5), [0.35, 0.6, 1.1, 2.1]),
    ],
)
def test_attribution_rules(attribution: Any, expected: list[float]) -> None:
    assert attribution.attribute([0.1] * 4, 2.0) == pytest.approx(expected)


def test_the_delayed_part_is_what_the_trajectory_rubrics_add() -> None:
    @rubric
    def shaping(action: Any) -> float:
        return 0.5

    @trajectory_rubric(intermediate=-0.1)
    def outcome(trajectory: Trajectory) -> float:
        return float(len(trajectory))

    total = WeightedSum([shaping, outcome], weights=[1.0, 2.0])
    steps = [Step(action={}, observation=Observation(done=i == 2), index=i) for i in range(3)]
    early = total.evaluate_sync(Trajectory(steps[:1]))
    assert (early.reward, early.delayed) == (pytest.approx(0.5 - 0.2), 0.0)
    assert early.breakdown == {"shaping": 0.5}  # not scored yet: left out
    last = total.evaluate_sync(Trajectory(steps))
    assert last.reward == pytest.approx(0.5 + 2 * 3)
    assert last.delayed == pytest.approx(2 * 3 - 2 * -0.1)
    assert last.breakdown == {"shaping": 0.5, "outcome": 3.0}
