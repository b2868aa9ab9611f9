"""Two rules every environment is held to, by the server's session core (whatever transport
drove it) and in this process by :class:`~openenv_hub.model.in_process.InProcess`.

* **Reset first.** A ``step`` or ``state`` before a session's first ``reset`` is answered with
  :class:`~openenv_hub.errors.ResetRequiredError`, so no environment meets a step it was not
  set up for. A stateless HTTP call (a fresh environment per request) has its episode started
  by the server, with ``reset()`` and no arguments, before the step or state it asks for.
  Listing an MCP environment's tools is no step of an episode and is always answered; an
  environment that needs no reset sets ``ALLOWS_STEP_BEFORE_RESET = True``.
* **Rewards in range.** A reward outside the range the environment declares
  (:func:`~openenv_hub.rubrics.ranges.declared_reward_range`) is flagged on its observation,
  ``metadata["reward_out_of_range"] = True``, and a warning naming the environment is logged
  once per server (or in-process wrapper).

Layer: model.
"""

from __future__ import annotations

import logging
from typing import Any

from openenv_hub.errors import EnvironmentExecutionError, ResetRequiredError
from openenv_hub.rubrics.ranges import contains
from openenv_hub.types import ListToolsAction, Observation

__all__ = [
    "REWARD_OUT_OF_RANGE",
    "RewardRangeFlag",
    "checked_observation",
    "needs_reset",
    "reset_required",
]

logger = logging.getLogger("openenv_hub.episodes")

#: The observation metadata key set on a reward outside the declared range.
REWARD_OUT_OF_RANGE = "reward_out_of_range"


def checked_observation(observation: Any, method: str) -> Observation:
    """``observation``, which ``method`` (``reset`` or ``step``) returned, if it is an
    :class:`~openenv_hub.types.Observation`.

    Raises:
        EnvironmentExecutionError: It is something else (the environment's defect, named).
    """
    if not isinstance(observation, Observation):
        raise EnvironmentExecutionError(
            f"{method}() returned {type(observation).__name__}; it must return an Observation"
        )
    return observation


def needs_reset(env: object, started: bool, action: object = None) -> bool:
    """Whether a ``step`` of ``action`` (``state`` when None) must wait for a ``reset``."""
    if started or getattr(env, "ALLOWS_STEP_BEFORE_RESET", False):
        return False
    return not isinstance(action, ListToolsAction)


def reset_required(method: str, session_id: str) -> ResetRequiredError:
    return ResetRequiredError(
        f"{method}() before reset(): the session has no episode in progress; call reset() "
        f"first to start one",
        data={"session_id": session_id},
    )


class RewardRangeFlag:
    """Flags rewards outside their declared range, logging the first one of the server.

    Args:
        env_name: The environment named in the warning.
    """

    def __init__(self, env_name: str) -> None:
        self.env_name = env_name
        self.warned = False

    def check(self, bounds: tuple[float, float], observation: Observation) -> Observation:
        """``observation``, flagged when its reward is outside ``bounds``."""
        reward: Any = observation.reward
        if reward is None or contains(bounds, float(reward)):
            return observation
        if not self.warned:
            self.warned = True
            logger.warning(
                "Environment %s returned the reward %r, outside its declared range [%g, %g]; "
                "the observation is flagged (metadata.%s) and this warning is not repeated",
                self.env_name, reward, bounds[0], bounds[1], REWARD_OUT_OF_RANGE,
            )  # fmt: skip
        metadata = {**observation.metadata, REWARD_OUT_OF_RANGE: True}
        return observation.model_copy(update={"metadata": metadata})
