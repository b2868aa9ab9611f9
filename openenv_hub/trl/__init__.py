"""Training with TRL's ``GRPOTrainer``, two ways.

**Environments as tools.** :func:`environment_factory` builds, for an environment served at a
URL, the class TRL's ``environment_factory`` plays: the model calls the environment's tools
over several turns, TRL generates and tokenises (:mod:`openenv_hub.trl.environment_tools`).

**Captured agent rollouts.** :class:`CaptureGRPOTrainer` takes a :class:`RolloutSource`
instead: each rollout of a GRPO group is an agent episode (a harness run against the model
through the capture proxy), and the trainer receives the captured token sequences and the
engine's logprobs, never re-tokenised text; the loss counts exactly the tokens the model
sampled. The pieces:

- :class:`RolloutRequest` (prompt, dataset row, sampling parameters, seed) in, and
  :class:`CapturedRollout` (``from_session(session, reward=...)``) out: the interface an
  episode runner implements (:mod:`openenv_hub.trl.rollouts`);
- :func:`rollout_batch`, :func:`completion_of`, :func:`untrainable`: captured sequences as TRL's
  completions, and the rollouts left out, with why (:class:`Untrainable`)
  (:mod:`openenv_hub.trl.completions`);
- :class:`CaptureGRPOTrainer` (needs the ``trl`` extra; imported when first used) and
  :func:`rollout_reward`, its default reward function (:mod:`openenv_hub.trl.trainer`).

Importing this package loads neither TRL nor torch.

Layer: client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openenv_hub.trl.completions import (
    Completion,
    Untrainable,
    completion_of,
    rollout_batch,
    rollout_reward,
    untrainable,
)
from openenv_hub.trl.environment_tools import ToolEnvironment, environment_factory, tool_schemas
from openenv_hub.trl.rollouts import CapturedRollout, RolloutRequest, RolloutSource

if TYPE_CHECKING:
    from openenv_hub.trl.trainer import CaptureGRPOTrainer

__all__ = [
    "CaptureGRPOTrainer",
    "CapturedRollout",
    "Completion",
    "RolloutRequest",
    "RolloutSource",
    "ToolEnvironment",
    "Untrainable",
    "completion_of",
    "environment_factory",
    "rollout_batch",
    "rollout_reward",
    "tool_schemas",
    "untrainable",
]


def __getattr__(name: str) -> Any:
    if name == "CaptureGRPOTrainer":
        try:
            from openenv_hub.trl.trainer import CaptureGRPOTrainer
        except ImportError as error:
            from openenv_hub.errors import DependencyNotInstalledError

            missing = error.name or "trl"
            raise DependencyNotInstalledError(
                missing, "trl", feature="CaptureGRPOTrainer"
            ) from error
        return CaptureGRPOTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
