"""``InProcess``: an environment stepped in this process gets what its server would send (the
rubric's reward and breakdown, the reset-first rule, the range flag), plain and async."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from openenv_hub import Action, Environment, InProcess, Observation, State
from openenv_hub.errors import EnvironmentExecutionError, ResetRequiredError
from openenv_hub.rubrics import rubric


class Say(Action):
    word: str


class Heard(Observation):
    word: str = ""


@rubric(range=(0, 1))
def polite(action: Say) -> float:
    return 1.0 if action.word == "please" else 0.0


@rubric(name="judged", range=(0, 1))
async def judged(observation: Heard) -> float:
    await asyncio.sleep(0)  # a scoring function that really awaits (an LLM judge would)
    return 0.5


class Parrot(Environment[Say, Heard, State]):
    rubric = polite

    def __init__(self) -> None:
        self._state = State()

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kw: Any) -> Heard:
        self._state = State(episode_id=episode_id)
        return Heard()

    def step(self, action: Say, timeout_s: float | None = None, **kw: Any) -> Heard:
        self._state.step_count += 1
        return Heard(word=action.word, reward=7.0)  # its own reward: the rubric's replaces it

    @property
    def state(self) -> State:
        return self._state


def test_the_rubric_scores_each_step_as_the_server_would() -> None:
    with InProcess(Parrot()) as env:
        env.reset()
        assert env.step(Say(word="please")).reward == 1.0
        rude = env.step(Say(word="now"))
        assert rude.reward == 0.0 and rude.metadata["reward_breakdown"] == {"polite": 0.0}
        assert env.rewards()["step_rewards"] == [1.0, 0.0]
        assert env.state.step_count == 2
        env.reset()
        assert env.rewards()["step_rewards"] == []
    assert Parrot().step(Say(word="please")).reward == 7.0  # unwrapped: the environment's own


def test_a_step_or_state_before_reset_is_refused() -> None:
    env = InProcess(Parrot())
    with pytest.raises(ResetRequiredError, match="call reset"):
        env.step(Say(word="please"))
    with pytest.raises(ResetRequiredError):
        env.state  # noqa: B018 - reading it is the call under test


def test_a_reward_outside_the_range_is_flagged_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Loud(Parrot):
        rubric = None
        reward_range = (0.0, 1.0)

    env = InProcess(Loud())
    env.reset()
    with caplog.at_level(logging.WARNING, logger="openenv_hub.episodes"):
        flagged = [env.step(Say(word="x")).metadata.get("reward_out_of_range") for _ in range(2)]
    assert flagged == [True, True]
    assert len([r for r in caplog.records if "declared range" in r.getMessage()]) == 1


async def test_async_steps_and_a_rubric_that_awaits() -> None:
    class Judged(Parrot):
        rubric = judged

    env = InProcess(Judged())
    await env.reset_async()
    assert (await env.step_async(Say(word="hi"))).reward == 0.5
    # the plain methods work inside a running loop too (a notebook): on a thread of their own
    assert env.step(Say(word="hi")).reward == 0.5


def test_mistakes_are_named() -> None:
    with pytest.raises(TypeError, match=r"InProcess\(MyEnvironment\(\)\)"):
        InProcess(Parrot)  # type: ignore[arg-type]

    class Broken(Parrot):
        def step(self, action: Say, timeout_s: float | None = None, **kw: Any) -> Heard:
            return {"word": action.word}  # type: ignore[return-value]

    env = InProcess(Broken())
    env.reset()
    with pytest.raises(EnvironmentExecutionError, match="step\\(\\) returned dict"):
        env.step(Say(word="x"))
