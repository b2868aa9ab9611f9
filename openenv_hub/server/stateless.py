"""A stateless HTTP ``/reset`` or ``/step`` in one call on the session's thread.

A stateless request creates an environment, starts its episode when the step needs one, calls
the method and closes the environment. Made one call at a time, that is four hand-offs to the
session's thread and four wake-ups of the event loop, each a wake-up of a thread on another
core, which a busy machine delays by whatever its scheduler makes a woken thread wait
(``benchmarks/README.md``, "The stateless HTTP call in one hop"). Here the four run as one call
on the thread: one hand-off, one wake-up. Environments whose calls do not all run on the thread
(``async`` methods, a rubric scored after each step) are handed back once created, and the
request goes on one call at a time as before.

Layer: server.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import ServerReplyError
from openenv_hub.model.environment import Environment
from openenv_hub.model.episode_rules import checked_observation, needs_reset
from openenv_hub.protocol import observation_payload
from openenv_hub.rubrics.ranges import declared_reward_range
from openenv_hub.server.calls import CallPlan, environment_failed
from openenv_hub.server.lifecycle import EnvFactory
from openenv_hub.server.session import Session
from openenv_hub.server.sessions import SessionPool
from openenv_hub.types import Action, Observation

__all__ = ["Answered", "EnvironmentRaised", "FactoryRaised", "OneCall", "stateless_call"]

logger = logging.getLogger("openenv_hub.server")


class FactoryRaised(Exception):
    """The environment factory raised ``error`` (carried to the event loop to be reported)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


class EnvironmentRaised(Exception):
    """The environment's ``method`` raised ``error`` (carried to the event loop)."""

    def __init__(self, method: str, error: Exception) -> None:
        super().__init__(str(error))
        self.method = method
        self.error = error


@dataclass(frozen=True, slots=True)
class Answered:
    """What the one call returned: the observation, and the range its reward must lie in."""

    observation: Observation
    reward_range: tuple[float, float]


@dataclass(frozen=True, slots=True)
class OneCall:
    """The work of one stateless request, run on the session's thread by calling it.

    ``method`` is ``"reset"`` or ``"step"``; ``params`` are the request's other fields. Returns
    :class:`Answered`, or the environment itself, not closed, when it has to be driven one call
    at a time (see the module's docstring). Raises :class:`FactoryRaised`,
    :class:`EnvironmentRaised`, or the server's own reply errors (reserved argument names, an
    observation that is not one).
    """

    factory: EnvFactory
    method: str
    params: dict[str, Any]
    action: Action | None = None

    def __call__(self) -> Answered | Environment[Any, Any, Any]:
        try:
            env = self.factory()
        except Exception as exc:
            raise FactoryRaised(exc) from exc
        plan = CallPlan.of(type(env))
        if plan.reset_async or plan.step_async or getattr(env, "rubric", None) is not None:
            return env
        try:
            observation = self._run(env, plan)
            reward_range = declared_reward_range(env)
        finally:
            _close(env)
        return Answered(observation, reward_range)

    def _run(self, env: Environment[Any, Any, Any], plan: CallPlan) -> Observation:
        if self.method == "reset":
            kwargs = plan.reset.keywords(self.params)
            return checked_observation(_called("reset", env.reset, **kwargs), "reset")
        kwargs = plan.step.keywords(self.params) if self.params else {}
        if needs_reset(env, False, self.action):
            checked_observation(_called("reset", env.reset), "reset")
        return checked_observation(_called("step", env.step, self.action, **kwargs), "step")


def _called(method: str, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ServerReplyError:
        raise
    except Exception as exc:
        raise EnvironmentRaised(method, exc) from exc


def _close(env: Environment[Any, Any, Any]) -> None:
    try:
        env.close()
    except Exception:
        logger.exception("Environment close() raised (stateless request)")


async def stateless_call(
    pool: SessionPool, method: str, params: dict[str, Any], action: Action | None = None
) -> dict[str, Any]:
    """A stateless ``reset`` (``action`` None) or ``step`` of ``action``: its reply payload.

    On a pool that no observer watches, the request is one call on its session's thread, or
    inline (:class:`OneCall`); otherwise, or when the environment must be driven one call at a
    time, each call is made in turn."""
    if pool.observers:
        async with pool.ephemeral() as session:
            return await _in_turn(pool, session, method, params, action)
    async with pool.ephemeral(create=False) as session:
        session.caller = asyncio.current_task()  # cancelled if the call is abandoned
        try:
            outcome = await pool.run_sync(session, OneCall(pool.factory, method, params, action))
        except FactoryRaised as raised:
            raise pool.factory_failed(raised.error) from raised.error
        except EnvironmentRaised as raised:
            raise environment_failed(session.id, raised.method, raised.error) from raised.error
        finally:
            session.caller = None
        if isinstance(outcome, Answered):
            session.reward_range = outcome.reward_range
            return observation_payload(pool._in_range(session, outcome.observation))
        pool.adopt(session, outcome)
        return await _in_turn(pool, session, method, params, action)


async def _in_turn(
    pool: SessionPool,
    session: Session,
    method: str,
    params: dict[str, Any],
    action: Action | None,
) -> dict[str, Any]:
    if method == "reset":
        return await pool.reset(session, params)
    assert action is not None
    return await pool.step(session, action, params)
