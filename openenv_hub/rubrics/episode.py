"""How the server applies an environment's rubric: one :class:`EpisodeScorer` per session.

The session core calls :meth:`EpisodeScorer.reset` after every ``reset`` and
:meth:`EpisodeScorer.score` after every ``step``. Scoring sets the observation's ``reward`` to
the rubric's value and puts the breakdown in ``metadata["reward_breakdown"]``; when the episode
ends and the environment asked for attribution, ``metadata["step_rewards"]`` holds the reward
credited to each step. :meth:`EpisodeScorer.summary` is what ``state`` shows under ``"rewards"``.

A rubric that fails (an LLM judge that cannot be reached, a scoring function that raises) fails
the step with a generic error: what went wrong (the judge's URL, its answer, a grader's
exception) goes to the server's log, never to the agent.

Layer: model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, overload

from openenv_hub.errors import ConfigurationError, EnvironmentExecutionError
from openenv_hub.rubrics.attribution import Attribution
from openenv_hub.rubrics.base import Rubric, Scored, Step, SyncRunner, Trajectory
from openenv_hub.types import Observation

__all__ = ["BREAKDOWN_KEY", "STEP_REWARDS_KEY", "EpisodeScorer"]

BREAKDOWN_KEY = "reward_breakdown"
STEP_REWARDS_KEY = "step_rewards"

logger = logging.getLogger("openenv_hub.rubrics")


class EpisodeScorer:
    """Scores the steps of one session's episodes with the environment's rubric.

    Args:
        rubric: The environment's rubric.
        attribution: How a delayed reward is credited back to the steps, or None to leave it on
            the final step only.
    """

    def __init__(self, rubric: Rubric, attribution: Attribution | None = None) -> None:
        if not isinstance(rubric, Rubric):
            raise ConfigurationError(
                f"An environment's rubric must be a Rubric, got {type(rubric).__name__}; wrap a "
                "function with @rubric or @trajectory_rubric"
            )
        if attribution is not None and not isinstance(attribution, Attribution):
            raise ConfigurationError(
                f"reward_attribution must be an Attribution (FinalStep, Uniform, Discounted), "
                f"got {type(attribution).__name__}"
            )
        self.rubric = rubric
        self.attribution = attribution
        self._steps: list[Step] = []
        self._rewards: list[float] = []
        self._immediate: list[float] = []
        self._attributed: list[float] | None = None
        self._last: Scored | None = None

    @classmethod
    def for_env(cls, env: object) -> EpisodeScorer | None:
        """A scorer for ``env`` when it declares a ``rubric``, else None."""
        rubric = getattr(env, "rubric", None)
        if rubric is None:
            return None
        return cls(rubric, getattr(env, "reward_attribution", None))

    def reset(self) -> None:
        """Forget the previous episode."""
        self._steps, self._rewards, self._immediate = [], [], []
        self._attributed, self._last = None, None

    def progress(self) -> tuple[Any, ...]:
        """A copy of what the scorer holds of the episode so far (for a snapshot)."""
        attributed = None if self._attributed is None else list(self._attributed)
        return (list(self._steps), list(self._rewards), list(self._immediate), attributed,
                self._last)  # fmt: skip

    def restore_progress(self, progress: tuple[Any, ...]) -> None:
        """Take up an episode where :meth:`progress` left it."""
        steps, rewards, immediate, attributed, last = progress
        self._steps, self._rewards, self._immediate = list(steps), list(rewards), list(immediate)
        self._attributed = None if attributed is None else list(attributed)
        self._last = last

    async def score(
        self, action: Any, observation: Observation, state: Any, *, run_sync: SyncRunner | None
    ) -> Observation:
        """Score the step that produced ``observation``, and write the result onto it."""
        step = Step(action=action, observation=observation, state=state, index=len(self._steps))
        trajectory = Trajectory(_WithNext(self._steps, step))  # no copy of the episode
        try:
            scored = await self.rubric.evaluate(trajectory, run_sync=run_sync)
        except EnvironmentExecutionError:
            raise
        except Exception as exc:
            hint = getattr(exc, "hint", "")
            logger.exception(
                "Rubric '%s' could not score step %d%s", self.rubric.name, step.index,
                f" (hint: {hint})" if hint else "",
            )  # fmt: skip
            raise EnvironmentExecutionError(
                f"Rubric '{self.rubric.name}' could not score this step ({type(exc).__name__}); "
                "the details are in the environment server's log."
            ) from exc
        self._steps.append(step)
        self._rewards.append(scored.reward)
        self._immediate.append(scored.reward - scored.delayed)
        self._last = scored
        metadata = dict(observation.metadata)
        metadata[BREAKDOWN_KEY] = scored.breakdown
        if trajectory.done and self.attribution is not None:
            self._attributed = self.attribution.attribute(self._immediate, scored.delayed)
            metadata[STEP_REWARDS_KEY] = self._attributed
        return observation.model_copy(update={"reward": scored.reward, "metadata": metadata})

    def summary(self) -> dict[str, Any]:
        """The episode's rewards so far, as ``state`` shows them under ``"rewards"``."""
        step_rewards = self._attributed if self._attributed is not None else list(self._rewards)
        return {
            "episode_return": float(sum(step_rewards)),
            "step_rewards": step_rewards,
            "last_breakdown": self._last.breakdown if self._last is not None else {},
        }


class _WithNext(Sequence[Step]):
    """The steps of the episode so far and the step being scored after them, read in place: a
    rubric sees a whole trajectory while the episode's list is not copied at every step."""

    __slots__ = ("_next", "_steps")

    def __init__(self, steps: list[Step], next_step: Step) -> None:
        self._steps, self._next = steps, next_step

    def __len__(self) -> int:
        return len(self._steps) + 1

    @overload
    def __getitem__(self, index: int) -> Step: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Step]: ...

    def __getitem__(self, index: int | slice) -> Step | Sequence[Step]:
        if isinstance(index, slice):
            return [*self._steps, self._next][index]
        size = len(self._steps)
        position = index + size + 1 if index < 0 else index
        if position == size:
            return self._next
        if not 0 <= position < size:
            raise IndexError("trajectory index out of range")
        return self._steps[position]
