"""What the capture proxy keeps: one :class:`CallRecord` per model call, and the
:class:`TrainingSequence` records that :func:`~openenv_hub.capture.assemble_sequences` makes
of them.

Both are plain data: ``as_dict()`` gives JSON-ready dicts (lists of ints and floats, strings,
None), ``from_dict()`` reads them back, so records travel with a trajectory, into a JSON Lines
file or a Hub dataset (see :func:`write_capture` and :func:`read_capture`).

Token ids and logprobs are the engine's own: ``prompt_ids`` is the prompt the engine ran,
``sampled_ids`` the tokens it sampled (the end-of-turn token included when it stopped on one),
``logprobs`` one float per sampled token. Nothing here was re-tokenised from text.

Layer: services.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "WIRE_FORMATS",
    "CallRecord",
    "TrainingSequence",
    "WireFormat",
    "read_capture",
    "write_capture",
]

#: The wire formats a harness may speak to the proxy.
WireFormat = Literal["chat", "responses", "messages"]
WIRE_FORMATS: tuple[WireFormat, ...] = ("chat", "responses", "messages")


@dataclass
class CallRecord:
    """One model call of a rollout, as the engine ran it.

    Attributes:
        index: The call's number in its session (0, 1, ...).
        wire: The format the harness spoke: ``"chat"`` (chat completions), ``"responses"``
            (OpenAI's Responses API) or ``"messages"`` (Anthropic's Messages API).
        streamed: Whether the harness asked for a stream (the proxy replayed the answer as one).
        model: The model name the harness asked for (the engine's own name is never shown).
        sampling: The sampling parameters sent to the engine (temperature, top_p, max_tokens,
            seed, stop, ...); a parameter left out was the engine's default.
        prompt_ids: The token ids of the prompt the engine ran.
        sampled_ids: The token ids it sampled.
        logprobs: The logprob of each sampled token (``len(logprobs) == len(sampled_ids)``).
        finish_reason: Why sampling stopped (``"stop"``, ``"length"``, ``"tool_calls"``).
        parent: The call whose ``prompt_ids + sampled_ids`` this call's prompt starts with (the
            latest such call), or None.
        continues: The call whose conversation this call's messages extend (its messages, then
            its reply), or None: where ``continues`` is set and ``parent`` differs, the ids
            broke where the conversation did not (a prefix break).
        stitched: Whether the proxy built the prompt from the continued call's ids (the
            sampled tokens as sampled) instead of letting the engine re-render the history.
        link_note: Why a call that continues another was not stitched, when it was not.
        messages: The request's messages in chat completions form, from ``history_length`` on
            (the earlier ones are the continued call's messages and reply).
        history_length: How many messages of the request precede ``messages``.
        tools: The tool names offered to the model.
        reply: The answer in chat completions form: ``{"role": "assistant", "content": ...,
            "tool_calls": [...]}``.
        dropped: What the request held that the engine cannot take (a hosted tool, a reasoning
            item), named so a reader knows the model never saw it.
        error: Why the call failed, when the engine gave no answer.
        error_status: The status the harness got for a failed call: 502 or 504 when the engine
            failed (unreachable, 5xx, too slow), the engine's 4xx when it refused the request.
        started_at: When the harness's request arrived (seconds since the epoch).
        engine_ms: How long the engine took.
        total_ms: How long the proxy took in all, the engine included.
    """

    index: int
    wire: WireFormat
    streamed: bool
    model: str | None
    sampling: dict[str, Any]
    prompt_ids: list[int]
    sampled_ids: list[int]
    logprobs: list[float]
    finish_reason: str | None
    parent: int | None = None
    continues: int | None = None
    stitched: bool = False
    link_note: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    history_length: int = 0
    tools: list[str] = field(default_factory=list)
    reply: dict[str, Any] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    error: str | None = None
    error_status: int | None = None
    started_at: float = 0.0
    engine_ms: float = 0.0
    total_ms: float = 0.0

    @property
    def engine_failed(self) -> bool:
        """Whether the engine itself failed this call (unreachable, 5xx, too slow), as opposed
        to refusing the request with a 4xx; a failed call of unknown status counts as one."""
        if self.error is None:
            return False
        return self.error_status is None or self.error_status >= 500

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRecord:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class TrainingSequence:
    """One token sequence to train on: linked calls, their prompts and what was sampled.

    Attributes:
        index: The sequence's number in its rollout.
        calls: The calls it is made of, in order (each continues the one before).
        input_ids: The token ids, prompt and sampled tokens interleaved as the engine ran them.
        loss_mask: 1 where the token was sampled by the model, 0 where it came from the prompt
            (the system prompt, user turns, tool results, the chat template's markers).
        logprobs: The sampling logprob at each position where ``loss_mask`` is 1, 0.0 elsewhere.
    """

    index: int
    calls: list[int]
    input_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainingSequence:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def write_capture(
    path: str | os.PathLike[str],
    rollouts: dict[str, list[CallRecord]],
) -> Path:
    """Write the calls of several rollouts to a JSON Lines file, one call a line, each with a
    ``rollout`` column (the key of ``rollouts``: a display id or an episode id, never a session
    key). :func:`openenv_hub.trajectories.push_trajectories` uploads such a file to a Hub
    dataset; :func:`read_capture` reads it back."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("w", encoding="utf-8") as out:
        for rollout, calls in rollouts.items():
            for call in calls:
                row = {"rollout": rollout, **call.as_dict()}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return file


def read_capture(
    rows: list[dict[str, Any]] | str | os.PathLike[str],
) -> dict[str, list[CallRecord]]:
    """The calls of each rollout, from a file :func:`write_capture` wrote or from its rows
    (as :func:`openenv_hub.trajectories.read_hub_records` gives them from a dataset)."""
    if not isinstance(rows, list):
        with Path(rows).open(encoding="utf-8") as lines:
            rows = [json.loads(line) for line in lines if line.strip()]
    rollouts: dict[str, list[CallRecord]] = {}
    for row in rows:
        rollouts.setdefault(str(row["rollout"]), []).append(CallRecord.from_dict(row))
    for calls in rollouts.values():
        calls.sort(key=lambda call: call.index)
    return rollouts
