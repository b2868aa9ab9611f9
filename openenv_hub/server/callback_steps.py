"""Steps no coroutine waits for: a ``/ws`` step started on the session's thread and answered
from a callback when it returns, or run on the event loop and answered before the next frame
is read (:meth:`CallbackSteps.start_step`); and the reward range every answer is checked
against.

Layer: server.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from openenv_hub.errors import EnvironmentExecutionError, ServerReplyError
from openenv_hub.model.episode_rules import RewardRangeFlag, checked_observation, needs_reset
from openenv_hub.protocol import observation_payload
from openenv_hub.server.calls import CallPlan, environment_failed
from openenv_hub.server.lifecycle import SessionLifecycle
from openenv_hub.server.session import Session
from openenv_hub.types import Action, Observation

__all__ = ["CallbackSteps", "StepAnswer"]

logger = logging.getLogger("openenv_hub.server")

#: Told on the event loop how a step started by :meth:`CallbackSteps.start_step` ended: the
#: observation's payload, or the error to answer with.
StepAnswer = Callable[[dict[str, Any] | None, ServerReplyError | None], None]


class CallbackSteps(SessionLifecycle):
    """The steps of :class:`~openenv_hub.server.sessions.SessionPool` that take no task."""

    def start_step(self, session: Session, action: Action, answer: StepAnswer) -> bool:
        """Start a step of ``session`` without a coroutine waiting for it: on its thread, with
        ``answer(payload, None)`` or ``answer(None, error)`` called on the event loop when it
        returns (a step waiting on a thread holds no task, coroutine or future); or, for a pool
        that runs on the event loop, here and now, answered before this returns. False, with
        nothing started, when the step needs :meth:`step` (see :meth:`may_start_step`, and a
        session with no episode yet)."""
        env, worker = session.env, session.worker
        if (
            env is None
            or not self.may_start_step(session)
            or needs_reset(env, session.episode_started, action)
        ):
            return False
        if worker is None:  # on the event loop: nothing else runs until it returns
            session.last_active = time.monotonic()
            try:
                obs = self.threads.run_inline(functools.partial(env.step, action))
            except Exception as exc:
                self._answer_step(session, answer, None, exc)
            else:
                self._answer_step(session, answer, obs, None)
            return True
        session.hold()
        session.thread_call_since = time.monotonic()
        worker.call(
            functools.partial(env.step, action),
            functools.partial(self._step_returned, session, answer),
        )
        return True

    def may_start_step(self, session: Session) -> bool:
        """Whether :meth:`start_step` could take a step of ``session`` now: its calls run on a
        thread no other call holds, or on the event loop, and no rubric, observer or ``async``
        step takes part."""
        env = session.env
        return not (
            env is None
            or (session.worker is None and not self.threads.inline)
            or session.closed
            or session.busy
            or session.lock.locked()
            or session.scorer is not None
            or self.observers
            or CallPlan.of(type(env)).step_async
        )

    def _step_returned(
        self, session: Session, answer: StepAnswer, obs: Any, exc: BaseException | None
    ) -> None:
        """A step started on a thread by :meth:`start_step` returned: free the session, then
        answer (unless the step was abandoned past the hard time limit: its session is closed,
        and its client was told so)."""
        abandoned = session.thread_call_since is None
        self._thread_call_returned(session, obs, exc)
        session.let_go()
        if not abandoned:
            self._answer_step(session, answer, obs, exc)

    def _answer_step(
        self, session: Session, answer: StepAnswer, obs: Any, exc: BaseException | None
    ) -> None:
        """Answer a step :meth:`start_step` ran: ``obs`` checked and shaped, or the error."""
        try:
            if exc is not None:
                if isinstance(exc, ServerReplyError):
                    raise exc
                raise environment_failed(session.id, "step", exc) from exc
            obs = checked_observation(obs, "step")
            session.step_count += 1
            payload = observation_payload(self._in_range(session, obs))
        except ServerReplyError as error:
            return answer(None, error)
        except Exception as exc:  # a defect of the server: answered, logged
            logger.exception("Session %s: unexpected failure answering step", session.id)
            return answer(None, EnvironmentExecutionError(f"Internal server error: {exc!r}"))
        answer(payload, None)

    @functools.cached_property
    def _reward_flag(self) -> RewardRangeFlag:
        return RewardRangeFlag(self.env_name or self.factory_name)

    def _in_range(self, session: Session, obs: Observation) -> Observation:
        """``obs``, flagged when its reward is outside the environment's declared range."""
        return self._reward_flag.check(session.reward_range, obs)
