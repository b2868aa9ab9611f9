"""Reward ranges: what an environment or a rubric declares its rewards lie in.

A range is a pair ``(low, high)`` of floats, either end possibly infinite. An environment
declares one with ``reward_range`` (as Gymnasium's environments did), or through its rubric
(``Rubric.range``); :func:`declared_reward_range` says which applies. The server publishes it
in ``/metadata`` and flags any reward outside it.

Example:
    >>> reward_range((0, 1), owner="Guess")
    (0.0, 1.0)
    >>> contains((0.0, 1.0), 1.5), contains(UNBOUNDED, 1e300), contains(UNBOUNDED, float("inf"))
    (False, True, False)

Layer: model.
"""

from __future__ import annotations

import math
from typing import Any

from openenv_hub.errors import ConfigurationError

__all__ = ["UNBOUNDED", "contains", "declared_reward_range", "reward_range", "wire_range"]

#: The range of a reward nothing bounds: what ranges default to.
UNBOUNDED: tuple[float, float] = (-math.inf, math.inf)


def reward_range(value: Any, *, owner: str) -> tuple[float, float]:
    """``value`` as a ``(low, high)`` pair of floats.

    Raises:
        ConfigurationError: not two numbers, a NaN, or ``low > high``; naming ``owner``.
    """
    try:
        low, high = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigurationError(
            f"{owner}: a reward range is a pair (low, high) of numbers, got {value!r}"
        ) from None
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ConfigurationError(
            f"{owner}: the reward range {value!r} is empty; give (low, high) with low <= high "
            "(float('inf') for no bound)"
        )
    return low, high


def contains(bounds: tuple[float, float], reward: float) -> bool:
    """Whether ``reward`` lies in ``bounds``. A NaN or an infinite reward lies in no range: an
    infinite end means no bound, not that infinity is a reward."""
    return math.isfinite(reward) and bounds[0] <= reward <= bounds[1]


def declared_reward_range(env: object) -> tuple[float, float]:
    """The range ``env``'s rewards (an environment, or its class) are declared to lie in: its ``reward_range`` when set, else
    its rubric's ``range`` (the rubric sets every reward), else :data:`UNBOUNDED`.

    Raises:
        ConfigurationError: the declared range is not a valid range.
    """
    name = env.__name__ if isinstance(env, type) else type(env).__name__
    declared = getattr(env, "reward_range", None)
    if declared is not None:
        return reward_range(declared, owner=f"{name}.reward_range")
    rubric = getattr(env, "rubric", None)
    if rubric is not None and hasattr(rubric, "range"):
        return reward_range(rubric.range, owner=f"{name}.rubric.range")
    return UNBOUNDED


def wire_range(bounds: tuple[float, float]) -> list[float | None]:
    """``bounds`` as JSON can carry it: ``[low, high]``, ``None`` for an end with no bound."""
    return [None if math.isinf(end) else end for end in bounds]
