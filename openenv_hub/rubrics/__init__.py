"""Rubrics: reward functions over steps and whole trajectories, composed declaratively.

An environment attaches one by setting class attributes; the server then scores every step,
sets the observation's ``reward``, and reports the breakdown in the observation's
``metadata["reward_breakdown"]`` and under ``"rewards"`` in ``state``::

    from openenv_hub.rubrics import Discounted, WeightedSum, rubric, trajectory_rubric

    @rubric
    def valid_move(observation) -> float:
        return 0.0 if observation.metadata.get("invalid") else 1.0

    @trajectory_rubric
    def won(observation) -> float:
        return 1.0 if observation.metadata.get("won") else 0.0

    class MyGame(Environment[Move, Board, State]):
        rubric = WeightedSum([valid_move, won], weights=[0.1, 1.0])
        reward_attribution = Discounted(gamma=0.9)   # optional: credit the win to every move

See ``docs/rewards.md`` for the whole guide.

Layer: model.
"""

from openenv_hub.rubrics.attribution import Attribution, Discounted, FinalStep, Uniform
from openenv_hub.rubrics.base import (
    Rubric,
    Scored,
    Step,
    Trajectory,
    TrajectoryRubric,
    observation_reward,
    rubric,
    trajectory_rubric,
)
from openenv_hub.rubrics.compose import AllOf, AnyOf, Gate, WeightedSum
from openenv_hub.rubrics.episode import BREAKDOWN_KEY, STEP_REWARDS_KEY, EpisodeScorer
from openenv_hub.rubrics.judge import Judge, JudgeError, LLMJudge, OpenAIJudge

__all__ = [
    "BREAKDOWN_KEY",
    "STEP_REWARDS_KEY",
    "AllOf",
    "AnyOf",
    "Attribution",
    "Discounted",
    "EpisodeScorer",
    "FinalStep",
    "Gate",
    "Judge",
    "JudgeError",
    "LLMJudge",
    "OpenAIJudge",
    "Rubric",
    "Scored",
    "Step",
    "Trajectory",
    "TrajectoryRubric",
    "Uniform",
    "WeightedSum",
    "observation_reward",
    "rubric",
    "trajectory_rubric",
]
