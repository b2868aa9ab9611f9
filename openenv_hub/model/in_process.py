"""An environment stepped in this process under the rules its server would apply.

Calling an environment's ``reset`` and ``step`` directly gives what its code returns and no
more: the server adds the environment's ``rubric`` (the reward and its breakdown), the rule
that an episode starts with ``reset`` and the check that rewards stay in the declared range.
:class:`InProcess` adds the same, with no server, so a reward computed in a notebook, a unit
test or a training loop that holds the environment equals the one a client gets over the wire.

Example (``Corridor`` and ``Move`` as in docs/rewards.md)::

    with InProcess(Corridor()) as env:
        env.reset()
        observation = env.step(Move(direction="right"))
        observation.reward, observation.metadata["reward_breakdown"]

Layer: model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

from openenv_hub.model.environment import Environment
from openenv_hub.model.episode_rules import (
    RewardRangeFlag,
    checked_observation,
    needs_reset,
    reset_required,
)
from openenv_hub.rubrics.episode import EpisodeScorer
from openenv_hub.rubrics.ranges import declared_reward_range
from openenv_hub.support.sync_bridge import run_to_end
from openenv_hub.types import Action, Observation, State

__all__ = ["InProcess"]

ActT = TypeVar("ActT", bound=Action)
ObsT = TypeVar("ObsT", bound=Observation)
StateT = TypeVar("StateT", bound=State)
_T = TypeVar("_T")


class InProcess(Generic[ActT, ObsT, StateT]):
    """``env``, held to its server's rules in this process.

    * ``step`` (and ``state``) before the first ``reset`` raise
      :class:`~openenv_hub.errors.ResetRequiredError`, unless the environment sets
      ``ALLOWS_STEP_BEFORE_RESET``;
    * each step's observation is scored by ``env.rubric`` when it has one: its ``reward`` is the
      rubric's, ``metadata["reward_breakdown"]`` the parts, and with ``reward_attribution`` the
      credited ``metadata["step_rewards"]`` when the episode ends; :meth:`rewards` is what a
      server's ``state`` shows under ``"rewards"``;
    * a reward outside ``env``'s declared range is flagged
      (``metadata["reward_out_of_range"]``) and logged once.

    The ``*_async`` methods do the same from a running event loop (and call the environment's
    own ``reset_async`` / ``step_async``). Other attributes are the environment's.

    Args:
        env: The environment; it stays usable directly (unscored) and is closed by
            :meth:`close`.
    """

    def __init__(self, env: Environment[ActT, ObsT, StateT]) -> None:
        if not isinstance(env, Environment):
            raise TypeError(
                f"InProcess takes an Environment instance, not {type(env).__name__}; "
                "create the environment first: InProcess(MyEnvironment())"
            )
        self.env = env
        self.reward_range = declared_reward_range(env)
        self._scorer = EpisodeScorer.for_env(env)
        self._flag = RewardRangeFlag(type(env).__name__)
        self._started = False

    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ObsT:
        """Start an episode (``env.reset``), forgetting the rubric's progress in the last."""
        observation: Any = self.env.reset(seed=seed, episode_id=episode_id, **kwargs)
        return self._started_with(checked_observation(observation, "reset"))

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ObsT:
        """:meth:`reset` through ``env.reset_async``."""
        observation: Any = await self.env.reset_async(seed=seed, episode_id=episode_id, **kwargs)
        return self._started_with(checked_observation(observation, "reset"))

    def step(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """Step the environment, then score the step with its rubric."""
        self._require_episode("step", action)
        observation: Any = self.env.step(action, timeout_s=timeout_s, **kwargs)
        observation = checked_observation(observation, "step")
        if self._scorer is not None:
            scoring = self._scorer.score(action, observation, self.env.state, run_sync=None)
            observation = _run(scoring)
        return self._in_range(observation)

    async def step_async(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """:meth:`step` through ``env.step_async``."""
        self._require_episode("step", action)
        observation: Any = await self.env.step_async(action, timeout_s=timeout_s, **kwargs)
        observation = checked_observation(observation, "step")
        if self._scorer is not None:
            observation = await self._scorer.score(
                action, observation, self.env.state, run_sync=None
            )
        return self._in_range(observation)

    @property
    def state(self) -> StateT:
        """The environment's state (after the first ``reset``)."""
        self._require_episode("state")
        return self.env.state

    def rewards(self) -> dict[str, Any]:
        """The episode's rewards so far: ``episode_return``, ``step_rewards`` and
        ``last_breakdown`` (empty for an environment without a rubric)."""
        if self._scorer is None:
            return {}
        return self._scorer.summary()

    def close(self) -> None:
        """Close the environment."""
        self.env.close()

    def __enter__(self) -> InProcess[ActT, ObsT, StateT]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"InProcess({self.env!r})"

    def _started_with(self, observation: Any) -> ObsT:
        self._started = True
        if self._scorer is not None:
            self._scorer.reset()
        return self._in_range(observation)

    def _require_episode(self, method: str, action: object = None) -> None:
        if needs_reset(self.env, self._started, action):
            raise reset_required(method, "in-process")

    def _in_range(self, observation: ObsT) -> ObsT:
        return self._flag.check(self.reward_range, observation)  # type: ignore[return-value]


def _run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """The coroutine's result: on a loop of its own here, or, called from inside a running
    loop (a notebook), on a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    return run_to_end(coroutine, thread_name="openenv-in-process-rubric")
