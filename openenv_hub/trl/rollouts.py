"""What a trainer asks of a rollout, and what it gets back: the captured token sequences.

A :class:`RolloutSource` is anything that, given a :class:`RolloutRequest` (the dataset row's
prompt and columns, the sampling parameters the engine must use, a seed), runs one episode
and returns a :class:`CapturedRollout`: the episode's training sequences as the capture proxy
assembled them from the engine's own token ids, the capture's grades, and the episode's reward.
A harness environment (one capture session per rollout) is one; so is a few lines of code that
drive a model through the proxy themselves:

    from openenv_hub.trl import CapturedRollout, RolloutRequest

    def run_episode(request: RolloutRequest) -> CapturedRollout:
        session = proxy.open_session()
        try:
            reward = my_harness(request.prompt, api_key=session.key, seed=request.seed)
        finally:
            proxy.close_session(session)
        return CapturedRollout.from_session(session, reward=reward)

Nothing here re-tokenises text, and nothing needs TRL or torch.

Layer: client.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from openenv_hub.capture import (
    CallRecord,
    CaptureReport,
    CaptureSession,
    TrainingSequence,
    assemble_sequences,
    grade_capture,
)

__all__ = ["CapturedRollout", "RolloutRequest", "RolloutSource"]


@dataclass(frozen=True)
class RolloutRequest:
    """One rollout a trainer asks for.

    Attributes:
        prompt: The dataset row's ``prompt`` (a string, or chat messages).
        row: The row's other columns (a task id, a seed, files, ...).
        sampling: What the engine must sample with, in chat completions names
            (``temperature``, ``top_p``, ``max_tokens``, and ``top_k``, ``min_p``,
            ``repetition_penalty`` when the trainer sets them). The trainer scores the sampled
            tokens with the same temperature; a rollout sampled with another one is not
            trained on.
        seed: A seed for this rollout, distinct within the trainer's step.
        index: The rollout's place in the trainer's batch (rollouts of one prompt are a group).
        step: The trainer's optimisation step when the rollout was asked for.
    """

    prompt: str | list[dict[str, Any]]
    row: dict[str, Any] = field(default_factory=dict)
    sampling: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    index: int = 0
    step: int = 0

    @property
    def prompt_text(self) -> str:
        """The prompt as one string: itself, or the text of its last user message."""
        if isinstance(self.prompt, str):
            return self.prompt
        for message in reversed(self.prompt):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))
        return ""


@dataclass
class CapturedRollout:
    """One finished rollout as a trainer takes it.

    Attributes:
        name: Names the rollout in logs (a capture session's ``display_id``; never its key).
        calls: The model calls the capture recorded.
        sequences: Their training sequences (``input_ids``, ``loss_mask`` over sampled tokens
            only, the engine's ``logprobs``).
        report: The capture's grades; a fatal one means the rollout is not trained on.
        reward: The episode's reward, or None when it has none.
    """

    name: str
    calls: list[CallRecord]
    sequences: list[TrainingSequence]
    report: CaptureReport
    reward: float | None = None

    @classmethod
    def from_calls(
        cls, name: str, calls: Iterable[CallRecord], *, reward: float | None = None
    ) -> CapturedRollout:
        """A rollout from its recorded calls (a session's, or ones read back with
        :func:`openenv_hub.capture.read_capture`): sequences assembled and grades computed."""
        ordered = sorted(calls, key=lambda call: call.index)
        return cls(name, ordered, assemble_sequences(ordered), grade_capture(ordered), reward)

    @classmethod
    def from_session(
        cls, session: CaptureSession, *, reward: float | None = None
    ) -> CapturedRollout:
        """A rollout from the capture session it ran in (one reading of its calls)."""
        return cls.from_calls(session.display_id, session.calls, reward=reward)


class RolloutSource(Protocol):
    """Runs one rollout: ``source(request) -> CapturedRollout``.

    It is called from worker threads when the trainer runs several rollouts at once
    (``max_concurrent_rollouts``), so it must be safe to call concurrently. An exception it
    raises stops the training step (the trainer logs which rollout failed): a rollout that
    could not run is an infrastructure failure, not a result to train on.
    """

    def __call__(self, request: RolloutRequest, /) -> CapturedRollout: ...
