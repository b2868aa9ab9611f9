"""How the session core calls an environment class: asynchronously or on its thread, with which
of the keyword arguments a request carries (subclasses may declare narrower signatures), and
what a client is told when a call raises.

Layer: server.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import ActionValidationError, EnvironmentExecutionError
from openenv_hub.model.environment import Environment

__all__ = ["CallPlan", "Signature", "environment_failed"]

logger = logging.getLogger("openenv_hub.server")


@dataclass(frozen=True)
class Signature:
    """Which keyword arguments a method takes.

    ``accepted`` is ``None`` when it takes ``**kwargs``. ``reserved`` are names a request may
    never pass as keywords: ``self``, the action, and positional-only parameters (passing them
    would bind an argument twice).
    """

    method: str
    accepted: frozenset[str] | None
    reserved: frozenset[str]

    def keywords(self, params: dict[str, Any]) -> dict[str, Any]:
        """The arguments of ``params`` the method accepts (others are dropped, as OpenEnv does).

        Raises:
            ActionValidationError: a reserved name, naming the field.
        """
        clashes = sorted(self.reserved.intersection(params))
        if clashes:
            raise _reserved_error(self.method, clashes)
        if self.accepted is None:
            return params
        return {k: v for k, v in params.items() if k in self.accepted}


@dataclass(frozen=True)
class CallPlan:
    """How to call one environment class: async or on a thread, and which kwargs it takes."""

    reset_async: bool
    step_async: bool
    reset: Signature
    step: Signature

    @staticmethod
    @functools.cache
    def of(cls: type[Environment[Any, Any, Any]]) -> CallPlan:
        reset_async = cls.reset_async is not Environment.reset_async
        step_async = cls.step_async is not Environment.step_async
        reset = cls.reset_async if reset_async else cls.reset
        step = cls.step_async if step_async else cls.step
        return CallPlan(
            reset_async, step_async, _signature("reset", reset), _signature("step", step, 1)
        )


def environment_failed(session_id: str, fn: Any, exc: BaseException) -> EnvironmentExecutionError:
    """What a client is told of an exception its environment's ``fn`` raised (logged in full)."""
    name = getattr(fn, "__name__", fn)
    logger.error("Session %s: environment raised in %s", session_id, name, exc_info=exc)
    return EnvironmentExecutionError(f"{type(exc).__name__}: {exc}")


def _signature(method: str, fn: Callable[..., Any], positional: int = 0) -> Signature:
    """``positional``: how many arguments after ``self`` the core passes by position."""
    params = list(inspect.signature(fn).parameters.values())
    bound = params[: 1 + positional]  # self (and the action)
    rest = params[1 + positional :]
    reserved = {p.name for p in bound} | {p.name for p in rest if p.kind is p.POSITIONAL_ONLY}
    reserved |= {"self", "action"} if positional else {"self"}
    if any(p.kind is p.VAR_KEYWORD for p in rest):
        return Signature(method, None, frozenset(reserved))
    accepted = {p.name for p in rest if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return Signature(method, frozenset(accepted), frozenset(reserved))


def _reserved_error(method: str, names: list[str]) -> ActionValidationError:
    errors = [
        {
            "type": "reserved_argument",
            "loc": [name],
            "msg": f"'{name}' cannot be passed to {method}(): the server passes it itself",
            "input": None,
        }
        for name in names
    ]
    listed = ", ".join(f"'{n}'" for n in names)
    return ActionValidationError(
        f"Invalid {method} arguments: {listed} cannot be passed to {method}(); rename the field",
        data={"errors": errors},
    )
