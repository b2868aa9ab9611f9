"""Credit assignment: how a delayed reward, known only when an episode ends, is spread back
over the steps that led to it.

An environment asks for it by setting ``reward_attribution`` next to its ``rubric``. The step
that ends the episode then carries ``metadata["step_rewards"]``: one reward per step, each
step's own (immediate) reward plus its share of the delayed reward. Recorded trajectories store
that value as ``attributed_reward``.

Layer: model.
"""

from __future__ import annotations

import abc

from openenv_hub.errors import ConfigurationError

__all__ = ["Attribution", "Discounted", "FinalStep", "Uniform"]


class Attribution(abc.ABC):
    """A rule giving each of ``length`` steps its share of a delayed reward."""

    @abc.abstractmethod
    def shares(self, length: int) -> list[float]:
        """The fraction of the delayed reward credited to each step, first step first."""

    def attribute(self, immediate: list[float], delayed: float) -> list[float]:
        """Each step's immediate reward plus its share of ``delayed``."""
        shares = self.shares(len(immediate))
        return [r + s * delayed for r, s in zip(immediate, shares, strict=True)]


class FinalStep(Attribution):
    """All of the delayed reward to the step that ended the episode (what the wire sends)."""

    def shares(self, length: int) -> list[float]:
        return [0.0] * (length - 1) + [1.0] if length else []


class Uniform(Attribution):
    """An equal share to every step (the shares sum to 1, so the return is unchanged)."""

    def shares(self, length: int) -> list[float]:
        return [1.0 / length] * length if length else []


class Discounted(Attribution):
    """``gamma ** (T - 1 - t)`` of the delayed reward to step ``t`` of ``T``: the last step gets
    all of it, each earlier one ``gamma`` times its successor's share.

    Args:
        gamma: The discount, in [0, 1]; 1 credits every step with the whole delayed reward,
            0 only the last step.
    """

    def __init__(self, gamma: float = 0.99) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ConfigurationError(f"gamma must be between 0 and 1, got {gamma}")
        self.gamma = gamma

    def shares(self, length: int) -> list[float]:
        return [self.gamma ** (length - 1 - t) for t in range(length)]

    def __repr__(self) -> str:
        return f"Discounted(gamma={self.gamma})"
