"""Training sequences from captured calls, by prefix linking, with no tokenizer.

A call continues an earlier one when its prompt ids start with that call's
``prompt_ids + sampled_ids``: the harness sent back what the model said, and the prompt grew
from there. :func:`find_parent` finds that call; :func:`assemble_sequences` chains linked calls
into one :class:`~openenv_hub.capture.TrainingSequence` each, whose ``loss_mask`` is 1 exactly
over the sampled tokens and whose ``logprobs`` are the engine's at those positions.

A call that continues nothing (the first call of a rollout, a harness that rewrote its
history, a side call with another system prompt) starts a new sequence. So does a second call
continuing a call that another call already continued (a retry, a branch): its sequence holds
the whole prompt, with the loss on its own sampled tokens only, so no sampled token is counted
twice.

Example:
    >>> from openenv_hub.capture import CallRecord, assemble_sequences
    >>> first = CallRecord(0, "chat", False, None, {}, [1, 2], [3, 4], [-0.5, -0.1], "stop")
    >>> second = CallRecord(1, "chat", False, None, {}, [1, 2, 3, 4, 5], [6], [-0.2], "stop",
    ...                     parent=0)
    >>> [s.loss_mask for s in assemble_sequences([first, second])]
    [[0, 0, 1, 1, 0, 1]]

Layer: services.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from openenv_hub.capture.records import CallRecord, TrainingSequence

__all__ = ["assemble_sequences", "find_parent"]

#: How many earlier calls :func:`find_parent` compares at most (the longest first).
MAX_CANDIDATES = 256


def _has_ids(call: CallRecord) -> bool:
    """Whether ``call`` can be trained on: prompt ids, sampled ids, a logprob for each."""
    return bool(call.prompt_ids and call.sampled_ids) and len(call.logprobs) == len(
        call.sampled_ids
    )


def find_parent(prompt_ids: Sequence[int], calls: Iterable[CallRecord]) -> int | None:
    """The index of the call whose ``prompt_ids + sampled_ids`` is the longest prefix of
    ``prompt_ids`` (the latest of equals), or None when no call's is."""
    candidates = sorted(
        (c for c in calls if _has_ids(c)),
        key=lambda c: (len(c.prompt_ids) + len(c.sampled_ids), c.index),
        reverse=True,
    )
    size = len(prompt_ids)
    prompt = list(prompt_ids)
    for call in candidates[:MAX_CANDIDATES]:
        ends = len(call.prompt_ids) + len(call.sampled_ids)
        if ends > size:
            continue
        if prompt[: len(call.prompt_ids)] == call.prompt_ids and (
            prompt[len(call.prompt_ids) : ends] == call.sampled_ids
        ):
            return call.index
    return None


def assemble_sequences(calls: Iterable[CallRecord]) -> list[TrainingSequence]:
    """The training sequences of one rollout's calls (in call order; calls without ids or
    without sampled tokens, which cannot be trained on, are left out)."""
    sequences: list[TrainingSequence] = []
    open_ends: dict[int, TrainingSequence] = {}  # last call of a sequence -> that sequence
    for call in sorted(calls, key=lambda c: c.index):
        if not _has_ids(call):
            continue
        sequence = open_ends.pop(call.parent, None) if call.parent is not None else None
        if sequence is None or call.prompt_ids[: len(sequence.input_ids)] != sequence.input_ids:
            sequence = TrainingSequence(len(sequences), [], [], [], [])
            sequences.append(sequence)
        gap = call.prompt_ids[len(sequence.input_ids) :]
        sequence.calls.append(call.index)
        sequence.input_ids.extend(gap)
        sequence.loss_mask.extend([0] * len(gap))
        sequence.logprobs.extend([0.0] * len(gap))
        sequence.input_ids.extend(call.sampled_ids)
        sequence.loss_mask.extend([1] * len(call.sampled_ids))
        sequence.logprobs.extend(float(x) for x in call.logprobs)
        open_ends[call.index] = sequence
    return sequences
