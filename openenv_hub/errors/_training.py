"""Errors of training on captured rollouts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openenv_hub.errors._base import OpenEnvError


class UntrainableRolloutError(OpenEnvError):
    """Rollouts that cannot be trained on, met by a trainer told to refuse them rather than
    leave them out.

    Attributes:
        rollouts: One record per rollout, each with ``index`` (its place in the batch),
            ``name`` (a capture session's display id), ``code`` and ``reason``
            (:class:`openenv_hub.trl.Untrainable`).
    """

    def __init__(self, rollouts: Sequence[Any]) -> None:
        self.rollouts = list(rollouts)
        lines = [f"rollout {r.index} ({r.name}): {r.reason}" for r in self.rollouts]
        super().__init__(
            f"{len(lines)} rollout(s) cannot be trained on:\n  " + "\n  ".join(lines),
            hint="Fix what the capture reports (docs/harnesses.md, Grades), or pass "
            'on_untrainable="drop" to leave such rollouts out of the loss and train on the rest.',
        )
