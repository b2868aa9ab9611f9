"""Captured rollouts as the completions TRL's ``GRPOTrainer`` trains on.

TRL's ``rollout_func`` returns, for each rollout, ``prompt_ids``, ``completion_ids`` and
``logprobs``, and may add an ``env_mask`` over the completion: 1 where the model sampled the
token, 0 where something else put it there (a tool's result, the next user turn, the chat
template's markers). TRL's loss mask is then its completion mask times ``env_mask``. A
captured :class:`~openenv_hub.capture.TrainingSequence` maps onto that exactly:

- ``prompt_ids``: its ``input_ids`` up to the first sampled token;
- ``completion_ids``: the rest, sampled and inserted tokens interleaved as the engine ran them;
- ``env_mask``: its ``loss_mask`` over the same positions (1 exactly over sampled tokens);
- ``logprobs``: the engine's logprob of each sampled token (0.0 at inserted ones, which the
  mask leaves out).

A rollout that cannot be trained on that way is not trained on, and says why
(:class:`Untrainable`): a capture graded fatal (its ids cannot be trusted), no sampled token
(the harness never called the model), more than one sequence (a GRPO completion is one token
sequence: a harness that rewrote its history, or made side calls with another prompt, gives
several), or a call sampled at another temperature than the trainer scores with (its logprobs
are of another distribution). Its place in the batch keeps a one-token filler whose mask is 0
and whose reward is None, so TRL's groups keep their size, the rollout adds nothing to the
loss and is left out of its group's reward baseline.

Layer: client.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openenv_hub.capture import Finding, TrainingSequence
from openenv_hub.trl.rollouts import CapturedRollout

__all__ = [
    "Completion",
    "Untrainable",
    "completion_of",
    "rollout_batch",
    "rollout_reward",
    "untrainable",
]


@dataclass(frozen=True)
class Completion:
    """One token sequence, split as TRL takes it (see the module's docstring)."""

    prompt_ids: list[int]
    completion_ids: list[int]
    logprobs: list[float]
    env_mask: list[int]


@dataclass(frozen=True)
class Untrainable:
    """A rollout left out of training.

    Attributes:
        index: Its place in the batch.
        name: Its name (a capture session's display id).
        code: Why, as a word: a fatal capture grade's code (``no_token_ids``,
            ``prefix_break``, ...), ``no_sequence``, ``several_sequences`` or
            ``temperature_differs``.
        reason: Why, in words.
    """

    index: int
    name: str
    code: str
    reason: str


def completion_of(sequence: TrainingSequence) -> Completion:
    """``sequence`` split where the model sampled its first token."""
    if 1 not in sequence.loss_mask:
        raise ValueError(f"sequence {sequence.index} has no sampled token to train on")
    first = sequence.loss_mask.index(1)
    return Completion(
        prompt_ids=list(sequence.input_ids[:first]),
        completion_ids=list(sequence.input_ids[first:]),
        logprobs=[float(x) for x in sequence.logprobs[first:]],
        env_mask=list(sequence.loss_mask[first:]),
    )


def _temperature_differs(rollout: CapturedRollout, temperature: float) -> str | None:
    for call in rollout.calls:
        sampled_at = call.sampling.get("temperature")
        if sampled_at is not None and not math.isclose(float(sampled_at), temperature):
            return (
                f"call {call.index} sampled at temperature {sampled_at}, and the trainer scores "
                f"tokens at {temperature}: its logprobs are of another distribution"
            )
    return None


def _fatal_summary(fatal: list[Finding]) -> str:
    """Each fatal code once, with the calls it was found at, then the first one's message."""
    calls: dict[str, list[str]] = {}
    for finding in fatal:
        calls.setdefault(finding.code, []).append(str(finding.call))
    codes = "; ".join(f"{code} (calls {', '.join(at)})" for code, at in calls.items())
    return f"{codes}. {fatal[0].message}"


def untrainable(
    rollout: CapturedRollout, *, index: int = 0, temperature: float = 1.0
) -> Untrainable | None:
    """Why ``rollout`` cannot be trained on as one GRPO completion, or None when it can."""

    def refuse(code: str, reason: str) -> Untrainable:
        return Untrainable(index, rollout.name, code, reason)

    fatal = rollout.report.of("fatal")
    if fatal:
        return refuse(fatal[0].code, f"its capture was graded fatal: {_fatal_summary(fatal)}")
    if not rollout.sequences:
        return refuse("no_sequence", "it captured no sampled token (no model call gave one)")
    if len(rollout.sequences) > 1:
        starts = [s.calls[0] for s in rollout.sequences]
        return refuse(
            "several_sequences",
            f"its calls make {len(rollout.sequences)} token sequences (starting at calls "
            f"{starts}), and a GRPO completion is one",
        )
    differs = _temperature_differs(rollout, temperature)
    if differs is not None:
        return refuse("temperature_differs", differs)
    return None


def rollout_batch(
    rollouts: Sequence[CapturedRollout], *, temperature: float, filler_id: int
) -> tuple[dict[str, list[Any]], list[Untrainable]]:
    """What TRL's ``rollout_func`` returns for ``rollouts`` (one completion each, in order),
    and the rollouts left out.

    Besides TRL's keys (``prompt_ids``, ``completion_ids``, ``logprobs``, ``env_mask``) the
    result has ``rollout_reward`` and ``rollout_name``, which TRL passes to reward functions
    (:func:`openenv_hub.trl.rollout_reward` reads the first). A rollout left out gets
    ``filler_id`` as its one prompt and one completion token, masked out, and a None reward.
    """
    batch: dict[str, list[Any]] = {
        key: []
        for key in (
            "prompt_ids",
            "completion_ids",
            "logprobs",
            "env_mask",
            "rollout_reward",
            "rollout_name",
        )
    }
    left_out = []
    for index, rollout in enumerate(rollouts):
        refused = untrainable(rollout, index=index, temperature=temperature)
        if refused is None:
            completion = completion_of(rollout.sequences[0])
            reward = None if rollout.reward is None else float(rollout.reward)
        else:
            left_out.append(refused)
            completion = Completion([filler_id], [filler_id], [0.0], [0])
            reward = None
        batch["prompt_ids"].append(completion.prompt_ids)
        batch["completion_ids"].append(completion.completion_ids)
        batch["logprobs"].append(completion.logprobs)
        batch["env_mask"].append(completion.env_mask)
        batch["rollout_reward"].append(reward)
        batch["rollout_name"].append(rollout.name)
    return batch, left_out


def rollout_reward(completions: list[Any], **columns: Any) -> list[float | None]:
    """A TRL reward function: the reward each rollout's source gave it (``rollout_reward``, a
    column :func:`rollout_batch` adds). None for a rollout left out or given no reward: TRL
    leaves it out of its group's baseline and gives it no advantage."""
    rewards: list[float | None] = list(columns["rollout_reward"])
    return rewards
