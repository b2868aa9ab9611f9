"""The rubric interface: what a reward function sees, and how a tree of them is evaluated.

A rubric scores either one step (:class:`Rubric`, via :meth:`Rubric.score`) or a whole episode
(:class:`TrajectoryRubric`, via :meth:`TrajectoryRubric.score_trajectory`). Every rubric is
evaluated after every step: a trajectory rubric is *delayed*, contributing its ``intermediate``
value (0.0 by default) until the step that ends the episode, where it scores the trajectory.

Rubrics hold no per-episode state, so one instance can serve every session of a server; the
session core keeps each episode's steps (see :mod:`openenv_hub.rubrics.episode`).

Each rubric declares the range its scores lie in (:attr:`Rubric.range`; composites derive theirs
from their parts); the server flags a reward outside the range of the environment's rubric.

Layer: model.
"""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from openenv_hub.rubrics.ranges import UNBOUNDED, reward_range
from openenv_hub.types import Observation

__all__ = [
    "Rubric",
    "Scored",
    "Step",
    "Trajectory",
    "TrajectoryRubric",
    "observation_reward",
    "rubric",
    "trajectory_rubric",
]

#: Runs a synchronous function somewhere (the session's thread) and awaits its result.
SyncRunner = Callable[[Callable[[], Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Step:
    """One step of an episode, as rubrics see it.

    Attributes:
        action: The action the agent sent.
        observation: What the environment returned (its own ``reward`` included).
        state: The environment's state right after the step (None when not read).
        index: 0 for the first step after a reset, 1 for the next, ...
    """

    action: Any
    observation: Observation
    state: Any = None
    index: int = 0


@dataclass(frozen=True)
class Trajectory:
    """The steps of one episode so far; ``done`` once the last observation ended it."""

    steps: Sequence[Step]

    @property
    def final(self) -> Step:
        """The latest step."""
        return self.steps[-1]

    @property
    def done(self) -> bool:
        return bool(self.steps) and bool(self.final.observation.done)

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class Scored:
    """The result of evaluating a rubric on the latest step of a trajectory.

    Attributes:
        reward: The rubric's value for this step.
        breakdown: Every named part's value, by dotted path (``"quality.style"``). Delayed parts
            appear only on the step that ends the episode; a gate that stayed shut leaves out the
            rubric it guards.
        delayed: The part of ``reward`` owed to trajectory rubrics: ``reward`` minus what it
            would have been with every trajectory rubric at its intermediate value. 0.0 before
            the final step.
    """

    reward: float
    breakdown: dict[str, float] = field(default_factory=dict)
    delayed: float = 0.0


class _Evaluation:
    """One evaluation of a rubric tree: the trajectory, leaf values computed so far, and the
    breakdown being filled in."""

    def __init__(self, trajectory: Trajectory, run_sync: SyncRunner | None) -> None:
        self.trajectory = trajectory
        self.run_sync = run_sync
        self.hold_delayed = not trajectory.done  # trajectory rubrics give their intermediate
        self.leaf_values: dict[int, float] = {}
        self.breakdown: dict[str, float] | None = {}

    async def call(self, fn: Callable[[], Any]) -> float:
        """Call a bound scoring function (plain or ``async``); check it returned a number."""
        if inspect.iscoroutinefunction(fn):
            value = await fn()
        elif self.run_sync is not None:
            value = await self.run_sync(fn)
        else:
            value = fn()
        if inspect.isawaitable(value):
            value = await value
        return _as_number(value, fn)

    def record(self, path: str, value: float) -> None:
        if self.breakdown is not None and path:
            self.breakdown[path] = value


def _as_number(value: Any, fn: Callable[..., Any]) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    name = getattr(fn, "__qualname__", repr(fn))
    raise TypeError(f"Rubric function {name} returned {type(value).__name__}; return a number")


def _snake_case(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Rubric:
    """A reward function over one step: implement :meth:`score` (plain or ``async``).

    Example:
        >>> class Shorter(Rubric):
        ...     def score(self, step):
        ...         return 1.0 if len(step.action.message) < 10 else 0.0

    Args:
        name: The key of this rubric in reward breakdowns. Default: the class name in
            snake_case (``Shorter`` → ``shorter``).
        range: The ``(low, high)`` its scores lie in (see :attr:`range`).
    """

    #: True for rubrics that score whole trajectories and so report only when an episode ends.
    delayed: ClassVar[bool] = False

    def __init__(
        self, *, name: str | None = None, range: tuple[float, float] | None = None
    ) -> None:
        self.name = name or _snake_case(type(self).__name__)
        owner = f"Rubric {self.name!r}"
        self._range = None if range is None else reward_range(range, owner=owner)

    @property
    def range(self) -> tuple[float, float]:
        """The ``(low, high)`` every score of this rubric lies in: as declared, else derived
        from its parts (composites), else ``(-inf, inf)``."""
        return self._range if self._range is not None else self._derived_range()

    def _derived_range(self) -> tuple[float, float]:
        return UNBOUNDED

    def score(self, step: Step) -> float | Awaitable[float]:
        """The reward for ``step``. Composite rubrics compute it from their children instead."""
        raise NotImplementedError(f"{type(self).__name__} must implement score(step)")

    @property
    def children(self) -> dict[str, Rubric]:
        """Named sub-rubrics (empty for a leaf)."""
        return {}

    @property
    def is_delayed(self) -> bool:
        """Whether this rubric, or any rubric inside it, scores whole trajectories."""
        return self.delayed or any(child.is_delayed for child in self.children.values())

    async def evaluate(
        self, trajectory: Trajectory, *, run_sync: SyncRunner | None = None
    ) -> Scored:
        """Score the latest step of ``trajectory``, with the breakdown of every part.

        Args:
            trajectory: The episode so far; its last step is the one being scored.
            run_sync: Runs synchronous scoring functions (the server passes the session's
                thread); by default they are called inline.
        """
        evaluation = _Evaluation(trajectory, run_sync)
        reward = await self._evaluate(evaluation, "")
        breakdown = evaluation.breakdown or {}
        if not self.children and not (self.delayed and evaluation.hold_delayed):
            breakdown = {self.name: reward}  # a lone leaf is its own breakdown
        delayed = 0.0
        if trajectory.done and self.is_delayed:
            evaluation.hold_delayed, evaluation.breakdown = True, None
            delayed = reward - await self._evaluate(evaluation, "")
        return Scored(reward=reward, breakdown=breakdown, delayed=delayed)

    def evaluate_sync(self, trajectory: Trajectory) -> Scored:
        """:meth:`evaluate` from synchronous code (not from inside a running event loop)."""
        return asyncio.run(self.evaluate(trajectory))

    def _bound_score(self, trajectory: Trajectory) -> Callable[[], Any]:
        """The scoring call of a leaf, with its arguments bound."""
        return _bind(self.score, trajectory.final)

    async def _evaluate(self, evaluation: _Evaluation, path: str) -> float:
        """The value of this rubric; a leaf is computed once per evaluation, then reused."""
        if self.delayed and evaluation.hold_delayed:
            return float(getattr(self, "intermediate", 0.0))
        value = evaluation.leaf_values.get(id(self))
        if value is None:
            value = await evaluation.call(self._bound_score(evaluation.trajectory))
            evaluation.leaf_values[id(self)] = value
        evaluation.record(path, value)
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class TrajectoryRubric(Rubric):
    """A delayed reward: implement :meth:`score_trajectory`, called when the episode ends.

    Before that, the rubric is worth ``intermediate`` on every step.

    Example:
        >>> class Won(TrajectoryRubric):
        ...     def score_trajectory(self, trajectory):
        ...         return 1.0 if trajectory.final.observation.metadata.get("won") else 0.0

    Args:
        intermediate: The value on steps that do not end the episode.
        name: The key of this rubric in reward breakdowns.
        range: The ``(low, high)`` its scores lie in, ``intermediate`` included.
    """

    delayed: ClassVar[bool] = True

    def __init__(
        self,
        *,
        intermediate: float = 0.0,
        name: str | None = None,
        range: tuple[float, float] | None = None,
    ) -> None:
        super().__init__(name=name, range=range)
        self.intermediate = intermediate

    def score_trajectory(self, trajectory: Trajectory) -> float | Awaitable[float]:
        """The reward of a finished episode."""
        raise NotImplementedError(f"{type(self).__name__} must implement score_trajectory()")

    def _bound_score(self, trajectory: Trajectory) -> Callable[[], Any]:
        return _bind(self.score_trajectory, trajectory)


# -- rubrics from functions ----------------------------------------------------------------------

_STEP_ARGUMENTS = frozenset({"action", "observation", "state", "step"})
_TRAJECTORY_ARGUMENTS = frozenset({"trajectory", "action", "observation", "state"})


def _argument_names(fn: Callable[..., Any], allowed: frozenset[str]) -> tuple[str, ...]:
    names = tuple(inspect.signature(fn).parameters)
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise TypeError(
            f"Rubric function {fn.__qualname__} takes {list(names)}; its parameters must be "
            f"named from {sorted(allowed)} (each is passed by name)"
        )
    return names


def _step_arguments(step: Step, names: tuple[str, ...]) -> dict[str, Any]:
    values = {"action": step.action, "observation": step.observation, "state": step.state}
    return {name: step if name == "step" else values[name] for name in names}


class _FunctionRubric(Rubric):
    def __init__(
        self, fn: Callable[..., Any], name: str | None, range: tuple[float, float] | None
    ) -> None:
        super().__init__(name=name or fn.__name__, range=range)
        self.fn = fn
        self._names = _argument_names(fn, _STEP_ARGUMENTS)
        self.__doc__ = fn.__doc__

    def _bound_score(self, trajectory: Trajectory) -> Callable[[], Any]:
        return _bind(self.fn, **_step_arguments(trajectory.final, self._names))


class _FunctionTrajectoryRubric(TrajectoryRubric):
    def __init__(
        self,
        fn: Callable[..., Any],
        name: str | None,
        intermediate: float,
        range: tuple[float, float] | None,
    ) -> None:
        super().__init__(intermediate=intermediate, name=name or fn.__name__, range=range)
        self.fn = fn
        self._names = _argument_names(fn, _TRAJECTORY_ARGUMENTS)
        self.__doc__ = fn.__doc__

    def _bound_score(self, trajectory: Trajectory) -> Callable[[], Any]:
        names = tuple(n for n in self._names if n != "trajectory")
        kwargs = _step_arguments(trajectory.final, names)
        if "trajectory" in self._names:
            kwargs["trajectory"] = trajectory
        return _bind(self.fn, **kwargs)


def _bind(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], Any]:
    """``fn`` with its arguments bound; an ``async`` function stays recognisably ``async``."""
    if inspect.iscoroutinefunction(fn):

        async def bound_async() -> Any:
            return await fn(*args, **kwargs)

        bound_async.__qualname__ = getattr(fn, "__qualname__", "rubric")
        return bound_async

    def bound() -> Any:
        return fn(*args, **kwargs)

    bound.__qualname__ = getattr(fn, "__qualname__", "rubric")
    return bound


def rubric(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    range: tuple[float, float] | None = None,
) -> Any:
    """Make a step rubric of a function (plain or ``async``), usable bare or with ``name=`` and
    ``range=`` (the ``(low, high)`` its scores lie in; default ``(-inf, inf)``).

    The function's parameters are passed by name: any of ``action``, ``observation``,
    ``state`` and ``step`` (the whole :class:`Step`).

    Example:
        >>> @rubric(range=(0, 1))
        ... def tool_succeeded(observation) -> float:
        ...     return 0.0 if getattr(observation, "error", None) else 1.0
        >>> tool_succeeded.name, tool_succeeded.range
        ('tool_succeeded', (0.0, 1.0))
    """

    def make(f: Callable[..., Any]) -> Rubric:
        return _FunctionRubric(f, name, range)

    return make(fn) if fn is not None else make


def trajectory_rubric(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    intermediate: float = 0.0,
    range: tuple[float, float] | None = None,
) -> Any:
    """Make a trajectory (delayed) rubric of a function, usable bare or with arguments.

    Parameters are passed by name: ``trajectory``, and ``action``, ``observation`` and
    ``state`` of the step that ended the episode.

    Example:
        >>> @trajectory_rubric
        ... def won(observation) -> float:
        ...     return 1.0 if observation.metadata.get("won") else 0.0
    """

    def make(f: Callable[..., Any]) -> Rubric:
        return _FunctionTrajectoryRubric(f, name, intermediate, range)

    return make(fn) if fn is not None else make


class _ObservationReward(Rubric):
    """The reward the environment itself put on the observation (0.0 when it set none)."""

    def score(self, step: Step) -> float:
        reward = step.observation.reward
        return 0.0 if reward is None else float(reward)


def observation_reward(
    *, name: str = "env_reward", range: tuple[float, float] | None = None
) -> Rubric:
    """A rubric worth the reward the environment's own ``step`` returned (None counts as 0).

    Use it to keep a game's native score inside a composite, e.g.
    ``WeightedSum([observation_reward(range=(-1, 1)), judge], weights=[1.0, 0.2])``;
    ``range`` is the range of the native reward.
    """
    return _ObservationReward(name=name, range=range)
