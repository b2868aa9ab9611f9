"""The :class:`Environment` base class that every environment derives from.

Layer: model.
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from openenv_hub.types import Action, EnvironmentMetadata, Observation, State

if TYPE_CHECKING:
    from openenv_hub.rubrics import Attribution, Rubric

__all__ = ["Environment"]

ActT = TypeVar("ActT", bound=Action)
ObsT = TypeVar("ObsT", bound=Observation)
StateT = TypeVar("StateT", bound=State)


class Environment(abc.ABC, Generic[ActT, ObsT, StateT]):
    """A Gymnasium-like environment served over HTTP, WebSocket and MCP.

    Implement :meth:`reset`, :meth:`step` and :attr:`state`; override :meth:`reset_async` /
    :meth:`step_async` instead when the environment is naturally asynchronous. The server calls
    synchronous methods on a thread of their own per session (so libraries that need thread
    affinity work) and awaits asynchronous ones on its event loop.

    Subclasses may declare narrower signatures (``def reset(self)``, ``def step(self, action)``):
    the server passes only the keyword arguments a method accepts.

    Example:
        >>> from pydantic import Field
        >>> from openenv_hub import Action, Environment, Observation, State
        >>> class Count(Action):
        ...     n: int = Field(ge=1, le=9)
        >>> class Total(Observation):
        ...     total: int = 0
        >>> class Counter(Environment[Count, Total, State]):
        ...     reward_range = (1.0, 9.0)  # each step is rewarded with its n
        ...     def reset(self, seed=None, episode_id=None, **kwargs):
        ...         self._state, self._total = State(episode_id=episode_id), 0
        ...         return Total()
        ...     def step(self, action, timeout_s=None, **kwargs):
        ...         self._total += action.n
        ...         self._state.step_count += 1
        ...         return Total(total=self._total, reward=action.n, done=self._total >= 10)
        ...     @property
        ...     def state(self):
        ...         return self._state
        >>> counter = Counter()
        >>> counter.reset().total
        0
        >>> counter.step(Count(n=3)).total
        3
    """

    #: Set to False when one process cannot host several instances at once (a global
    #: resource, a non-reentrant library). The server then allows exactly one session.
    SUPPORTS_CONCURRENT_SESSIONS: ClassVar[bool] = True
    #: Set to True to run the synchronous methods of every session on one shared thread.
    REQUIRES_SINGLE_THREAD_EXECUTOR: ClassVar[bool] = False
    #: Set to True when ``reset``, ``step`` and ``state`` are quick (well under a millisecond)
    #: and need no thread of their own: the server then calls them on its event loop, without a
    #: thread hop, which makes each call cheaper. Leave it False when a call can take longer
    #: (it would hold up every other session meanwhile; the server logs it once) or when the
    #: environment uses a library with thread affinity. Pure-Python CPU work, which holds the
    #: GIL on any thread, is the exception worth measuring: see "CPU-bound environments" in
    #: docs/scale.md.
    RUNS_ON_EVENT_LOOP: ClassVar[bool] = False
    #: The server answers ``step`` and ``state`` before a session's first ``reset`` with
    #: :class:`~openenv_hub.errors.ResetRequiredError` (a stateless ``POST /step`` or
    #: ``GET /state`` resets its fresh environment first). Set to True when the constructor
    #: already starts an episode and steps need no reset (an environment of stateless tools):
    #: the server then passes them through.
    ALLOWS_STEP_BEFORE_RESET: ClassVar[bool] = False
    #: The range every reward lies in, ``(low, high)``, as Gymnasium's ``reward_range`` was.
    #: The server publishes it in ``/metadata``, and a reward outside it is flagged
    #: (``metadata["reward_out_of_range"]``, and a warning logged once). None (the default)
    #: takes the range the rubric declares (``Rubric.range``), else ``(-inf, inf)``. An
    #: instance may set its own in ``__init__`` (the Gymnasium adapter does).
    reward_range: tuple[float, float] | None = None
    #: The rubric that scores every step (see :mod:`openenv_hub.rubrics`). The server sets each
    #: step's ``reward`` to its value and reports the breakdown in the observation's metadata
    #: and in ``state``. None (the default) leaves rewards to ``step``.
    rubric: Rubric | None = None
    #: How a delayed (trajectory) reward is credited back to the episode's steps, e.g.
    #: ``Discounted(0.9)``; None leaves it on the step that ended the episode.
    reward_attribution: Attribution | None = None

    @abc.abstractmethod
    def reset(self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any) -> ObsT:
        """Start a new episode and return its first observation."""

    async def reset_async(
        self, seed: int | None = None, episode_id: str | None = None, **kwargs: Any
    ) -> ObsT:
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    @abc.abstractmethod
    def step(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        """Apply one action and return the resulting observation."""

    async def step_async(self, action: ActT, timeout_s: float | None = None, **kwargs: Any) -> ObsT:
        return self.step(action, timeout_s=timeout_s, **kwargs)

    @property
    @abc.abstractmethod
    def state(self) -> StateT:
        """The current episode's state."""

    def snapshot(self) -> Any:
        """A copy of the episode's state that :meth:`restore` brings back exactly.

        Optional: an environment that implements it lets a recorded episode be forked at any
        step exactly (see docs/debugging.md); one that does not is forked by replaying the
        recorded actions. The server calls it after a reset or step when something records
        the episode, keeps what it returns in its own memory under an opaque id, and never
        sends it anywhere: restoring takes only snapshots the server made. Copy only state the
        environment owns (never a grader's hidden tests, a judge's secrets or a process).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement snapshot()")

    def restore(self, snapshot: Any) -> None:
        """Bring back the state :meth:`snapshot` returned; the episode plays on from there.

        A snapshot may be restored many times: copy what you take from it, never change it.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement restore()")

    def state_digest(self) -> str | None:
        """A short hash of the episode's whole internal state, or None (the default: none).

        Optional: a server that records episodes stores it with every step, and a fork by
        replay compares it step by step, so a replay whose observations match while hidden
        state (a random generator, a counter) went another way is caught where it happens.
        Hash what decides the episode's future, random generators included; two states that
        play on alike must give the same digest (leave out ids and wall-clock times).
        """
        return None

    def replay_refusal(self) -> str | None:
        """Why the current episode would not replay exactly from its reset's arguments and its
        actions, or None (the default) when it would.

        A fork by replay is refused, by default, where this gave a reason when the episode
        was recorded (e.g. ``"no seed was given at reset, and the opponent's moves are
        random"``); a fork from a snapshot the server kept is not. Say so when the episode
        draws random numbers that ``reset(seed=...)`` did not fix.
        """
        return None

    def close(self) -> None:
        """Release resources. Called once when the session ends."""

    def get_metadata(self) -> EnvironmentMetadata:
        name = type(self).__name__
        return EnvironmentMetadata(name=name, description=f"{name} environment", version="1.0.0")
