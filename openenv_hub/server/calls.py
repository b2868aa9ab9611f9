"""How the session core calls an environment class: asynchronously or on its thread, and with
which of the keyword arguments a request carries (subclasses may declare narrower signatures)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openenv_hub.environment import Environment

__all__ = ["CallPlan"]


@dataclass(frozen=True)
class CallPlan:
    """How to call one environment class: async or on a thread, and which kwargs it takes."""

    reset_async: bool
    step_async: bool
    reset_params: frozenset[str] | None  # None: accepts **kwargs
    step_params: frozenset[str] | None

    @staticmethod
    @functools.cache
    def of(cls: type[Environment[Any, Any, Any]]) -> CallPlan:
        reset_async = cls.reset_async is not Environment.reset_async
        step_async = cls.step_async is not Environment.step_async
        reset = cls.reset_async if reset_async else cls.reset
        step = cls.step_async if step_async else cls.step
        return CallPlan(reset_async, step_async, _accepted(reset), _accepted(step, skip="action"))

    @staticmethod
    def filter(params: dict[str, Any], accepted: frozenset[str] | None) -> dict[str, Any]:
        if accepted is None:
            return params
        return {k: v for k, v in params.items() if k in accepted}


def _accepted(fn: Callable[..., Any], skip: str = "") -> frozenset[str] | None:
    params = list(inspect.signature(fn).parameters.values())[1:]  # drop self
    if skip and params and params[0].name == skip:
        params = params[1:]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return frozenset(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
