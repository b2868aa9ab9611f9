"""A seeded-defect corpus: a small sound quiz environment, and copies of it that each carry one
planted defect the quality scorecard must catch and name.

The quiz: ``reset(seed=S)`` picks a vault from ``random.Random(S)`` and asks for its code; one
``answer`` step ends the episode, rewarded 1.0 for the right code and 0.0 otherwise. Its oracle
(:func:`oracle`, a policy as ``openenv eval`` plays it) reads the question and answers from the
table, which the agent never sees.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any, ClassVar

from pydantic import Field

from openenv_hub import Action, Environment, Observation, State, create_app
from openenv_hub.model.manifest import Quality, QualityOracle
from openenv_hub.types import EnvironmentMetadata

VAULTS = {
    "north": "tulip-4417-amber-quay",
    "south": "heron-0082-slate-moor",
    "east": "quill-7731-ochre-fjord",
    "west": "maple-2290-cobalt-dune",
    "centre": "lynx-5564-umber-cove",
}
NAMES = sorted(VAULTS)


class Answer(Action):
    """The code of the vault asked about."""

    answer: str = Field(..., max_length=64, description="The vault's code")


class QuizObservation(Observation):
    question: str = ""
    feedback: str = ""


class QuizEnvironment(Environment[Answer, QuizObservation, State]):
    """The sound quiz: every defect below changes one thing of it."""

    reward_range = (0.0, 1.0)

    def __init__(self) -> None:
        self._vault = NAMES[0]
        self._state = State()

    def choose(self, seed: int | None) -> str:
        return random.Random(seed).choice(NAMES)

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> QuizObservation:
        self._vault = self.choose(seed)
        self._state = State(episode_id=episode_id)
        return self.first_observation()

    def first_observation(self) -> QuizObservation:
        return QuizObservation(question=f"What is the code of the {self._vault} vault?", reward=0.0)

    def step(
        self, action: Answer, timeout_s: float | None = None, **kwargs: Any
    ) -> QuizObservation:
        self._state.step_count += 1
        reward = self.grade(action.answer, VAULTS[self.vault()])
        feedback = "right" if reward >= 1.0 else "wrong"
        return QuizObservation(question="", feedback=feedback, reward=reward, done=True)

    def vault(self) -> str:
        return self._vault

    def grade(self, answer: str, code: str) -> float:
        return 1.0 if answer.strip() == code else 0.0

    @property
    def state(self) -> State:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(name="quiz", description="Name the code of a vault.")


class IgnoresItsSeed(QuizEnvironment):
    """Draws the vault from the process's random state: the seed changes nothing."""

    def choose(self, seed: int | None) -> str:
        return random.choice(NAMES)


class OneStartForEverySeed(QuizEnvironment):
    """Claims that seeds choose the vault, and always asks about the same one."""

    def choose(self, seed: int | None) -> str:
        return NAMES[0]


class LeaksTheAnswer(QuizEnvironment):
    """Puts the code in the observation's metadata, for a debugging view."""

    def first_observation(self) -> QuizObservation:
        observation = super().first_observation()
        observation.metadata = {"debug": {"expected": VAULTS[self._vault]}}
        return observation


class RewardsAnEmptyAnswer(QuizEnvironment):
    """Accepts any prefix of the code, the empty answer included."""

    def grade(self, answer: str, code: str) -> float:
        return 1.0 if code.startswith(answer.strip()) else 0.0


class NondeterministicGrader(QuizEnvironment):
    """Gives a wrong answer a little noisy partial credit."""

    def grade(self, answer: str, code: str) -> float:
        return 1.0 if answer.strip() == code else round(random.uniform(0.0, 0.1), 6)


class SharedState(QuizEnvironment):
    """Keeps the vault asked about on the class: every session sees the last reset's."""

    current: ClassVar[str] = NAMES[0]

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> QuizObservation:
        observation = super().reset(seed, episode_id, **kwargs)
        type(self).current = self._vault
        return observation

    def vault(self) -> str:
        return type(self).current


class RewardOutsideItsRange(QuizEnvironment):
    """Declares rewards in [0, 1] and scales a right answer by ten."""

    def grade(self, answer: str, code: str) -> float:
        return 10.0 * super().grade(answer, code)


class SlowReset(QuizEnvironment):
    """Takes 1.2 s to reset (loads its table from a slow disk, say)."""

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> QuizObservation:
        time.sleep(1.2)
        return super().reset(seed, episode_id, **kwargs)


class DiesAfterSteps(QuizEnvironment):
    """A sound quiz whose server process dies at its eighth step, as a server the machine
    kills: no defect of the environment, a failure of the instrument."""

    steps: ClassVar[int] = 0

    def step(
        self, action: Answer, timeout_s: float | None = None, **kwargs: Any
    ) -> QuizObservation:
        type(self).steps += 1
        if type(self).steps >= 8:
            os._exit(1)
        return super().step(action, timeout_s, **kwargs)


class HangsOnLongAnswers(QuizEnvironment):
    """A sound quiz whose server is too slow to answer a long answer in time."""

    def step(
        self, action: Answer, timeout_s: float | None = None, **kwargs: Any
    ) -> QuizObservation:
        if len(action.answer) == 64:
            time.sleep(3)
        return super().step(action, timeout_s, **kwargs)


#: Each defect: its environment, the check that must catch it, words its evidence must hold,
#: and the other checks it fails too (an environment that ignores its seed replays differently).
DEFECTS: dict[str, tuple[type[QuizEnvironment], str, str, set[str]]] = {
    "ignores its seed": (
        IgnoresItsSeed, "seeds", "the seed does not decide the start", {"determinism"}
    ),
    "one start for every seed": (
        OneStartForEverySeed, "seeds", "seeds do not choose the start", set()
    ),
    "leaks the answer in metadata": (
        LeaksTheAnswer, "no_leakage", "reset observation.metadata.debug.expected", set()
    ),
    "rewards an empty answer": (RewardsAnEmptyAnswer, "floor", "empty answer: 1 on", set()),
    "non-deterministic grader": (
        NondeterministicGrader, "determinism", "for the same observation", set()
    ),
    "shared state across sessions": (SharedState, "isolation", "reward 1 then 0", set()),
    "reward outside its range": (RewardOutsideItsRange, "solvable", "reward 10", set()),
    "slow reset": (SlowReset, "cost", "a reset's median is", set()),
}  # fmt: skip


def app(environment: type[QuizEnvironment]) -> Any:
    return create_app(environment, Answer, QuizObservation, env_name="quiz")


def oracle(messages: list[dict[str, Any]], tools: list[dict[str, Any]], seed: int) -> Any:
    """Reads the vault from the question and answers its code (a policy of ``openenv eval``)."""
    question = json.loads(messages[0]["content"]).get("question", "")
    vault = next(name for name in NAMES if f" {name} vault" in question)
    return {
        "tool_calls": [{"function": {"name": "answer", "arguments": {"answer": VAULTS[vault]}}}]
    }


def quality(tasks: int = 3) -> Quality:
    """The quiz's quality settings: its oracle, seeds that choose the vault."""
    return Quality(oracle=QualityOracle(policy="quality_corpus:oracle"), seeded=True, tasks=tasks)


MANIFEST = """\
spec_version: 1
name: quiz
quality:
  oracle:
    policy: quality_corpus:oracle
  seeded: true
"""
