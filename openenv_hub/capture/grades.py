"""Grading a rollout's capture: can its sequences be trained on as they are?

:func:`grade_capture` checks the calls of one rollout and returns a :class:`CaptureReport`
of :class:`Finding` records, each with a grade:

- ``fatal``: the capture cannot be trusted for training. ``no_token_ids``: the engine gave no
  prompt or sampled ids, or fewer logprobs than sampled tokens. ``prefix_break``: a call's
  messages continue an earlier call, but its prompt ids do not start with that call's prompt
  and sampled ids (where none was expected: the sequence would be split, or worse, trained on
  tokens the model never saw). ``engine_ignored_prompt``: the proxy sent the prompt as ids and
  the engine ran another one. ``engine_failed``: the engine gave no answer (unreachable, 5xx,
  too slow): the rollout did not run as the harness asked, so neither its sequences nor its
  reward stand for what the model would have done.
- ``warn``: the data is sound but a trainer should know. ``sampling_changes_logprobs``: top-p
  below 1, top-k, min-p, penalties, a logit bias, ``min_tokens`` (the end-of-turn token masked
  until then) or a ``response_format`` other than text (decoding constrained to a grammar) made
  the sampled distribution differ from the model's, so the recorded logprobs are not the
  policy's. ``history_rerendered``: the
  chat template renders the earlier turns differently once the conversation grows, so the
  call starts a new sequence. ``call_failed``: the engine refused the request (a 4xx: the
  harness sent something it does not take).
- ``info``: how the rollout went. ``new_sequence`` (and why), ``temperature`` (logprobs are
  of the tempered distribution), ``dropped`` (what the engine could not take), ``summary``.

Layer: services.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from openenv_hub.capture.records import CallRecord
from openenv_hub.capture.sequences import assemble_sequences

__all__ = ["CaptureReport", "Finding", "Grade", "grade_capture"]

Grade = Literal["fatal", "warn", "info"]

#: Sampling parameters that, away from their neutral value, change the distribution sampled
#: from (so the logprobs the engine reports are not the model's own).
NEUTRAL_SAMPLING: dict[str, Any] = {
    "top_p": 1.0,
    "top_k": -1,
    "min_p": 0.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "repetition_penalty": 1.0,
    "min_tokens": 0,
}


@dataclass(frozen=True)
class Finding:
    """One observation about a rollout's capture.

    Attributes:
        grade: ``"fatal"``, ``"warn"`` or ``"info"``.
        code: What kind of finding (see the module's docstring).
        message: What happened, in words.
        call: The call it is about, or None for the whole rollout.
    """

    grade: Grade
    code: str
    message: str
    call: int | None = None


@dataclass
class CaptureReport:
    """The findings about one rollout's capture, and its counts."""

    findings: list[Finding] = field(default_factory=list)
    calls: int = 0
    sequences: int = 0
    sampled_tokens: int = 0

    @property
    def ok(self) -> bool:
        """No fatal finding: the sequences can be trained on."""
        return not self.of("fatal")

    def of(self, grade: Grade) -> list[Finding]:
        return [f for f in self.findings if f.grade == grade]

    def codes(self, grade: Grade | None = None) -> list[str]:
        return [f.code for f in self.findings if grade is None or f.grade == grade]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_neutral(name: str, value: Any) -> bool:
    if value is None:
        return True
    neutral = NEUTRAL_SAMPLING[name]
    if name == "top_k":
        return int(value) in (-1, 0)
    return float(value) == float(neutral)


def _sampling_findings(call: CallRecord) -> list[Finding]:
    found = []
    changed = [
        f"{name}={call.sampling[name]!r}"
        for name in NEUTRAL_SAMPLING
        if name in call.sampling and not _is_neutral(name, call.sampling[name])
    ]
    if call.sampling.get("logit_bias"):
        changed.append("logit_bias")
    response_format = call.sampling.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type", "text") != "text":
        changed.append(f"response_format={response_format.get('type')!r}")
    if changed:
        found.append(
            Finding(
                "warn",
                "sampling_changes_logprobs",
                f"call {call.index} sampled with {', '.join(changed)}: its logprobs are of the "
                "changed distribution, not the model's",
                call.index,
            )
        )
    temperature = call.sampling.get("temperature")
    if temperature is not None and float(temperature) != 1.0:
        found.append(
            Finding(
                "info",
                "temperature",
                f"call {call.index} sampled at temperature {temperature}: its logprobs are of "
                "the tempered distribution",
                call.index,
            )
        )
    return found


def _ids_findings(call: CallRecord) -> list[Finding]:
    if call.engine_failed:
        message = f"call {call.index} got no answer from the engine: {call.error}"
        return [Finding("fatal", "engine_failed", message, call.index)]
    if call.error is not None:
        message = f"call {call.index} was refused by the engine: {call.error}"
        return [Finding("warn", "call_failed", message, call.index)]
    missing = []
    if not call.prompt_ids:
        missing.append("prompt ids")
    if not call.sampled_ids:
        missing.append("sampled ids")
    elif len(call.logprobs) != len(call.sampled_ids):
        missing.append(f"logprobs ({len(call.logprobs)} for {len(call.sampled_ids)} tokens)")
    if not missing:
        return []
    message = (
        f"call {call.index}: the engine returned no {' and no '.join(missing)}; start it with "
        "--return-tokens-as-token-ids and --logprobs-mode processed_logprobs"
    )
    return [Finding("fatal", "no_token_ids", message, call.index)]


def _link_findings(call: CallRecord) -> list[Finding]:
    if call.error is not None or not call.prompt_ids:
        return []
    if call.continues is None:
        reason = call.link_note or "it continues no earlier call"
        message = f"call {call.index} starts a new sequence: {reason}"
        return [Finding("info", "new_sequence", message, call.index)]
    if call.parent == call.continues:
        return []
    note = f" ({call.link_note})" if call.link_note else ""
    if call.link_note and call.link_note.startswith("the chat template"):
        message = (
            f"call {call.index} continues call {call.continues} but starts a new sequence{note}"
        )
        return [Finding("warn", "history_rerendered", message, call.index)]
    if call.stitched:
        message = (
            f"call {call.index}: the proxy sent the prompt as ids continuing call "
            f"{call.continues}, and the engine ran another prompt; it does not take "
            "kv_transfer_params.prompt_token_ids"
        )
        return [Finding("fatal", "engine_ignored_prompt", message, call.index)]
    message = (
        f"call {call.index} continues call {call.continues}'s conversation, but its prompt ids "
        f"do not start with that call's prompt and sampled ids{note}"
    )
    return [Finding("fatal", "prefix_break", message, call.index)]


def grade_capture(calls: Iterable[CallRecord]) -> CaptureReport:
    """Grade one rollout's calls (see the module's docstring for what each grade means)."""
    ordered = sorted(calls, key=lambda c: c.index)
    report = CaptureReport(calls=len(ordered))
    for call in ordered:
        report.findings.extend(_ids_findings(call))
        report.findings.extend(_link_findings(call))
        report.findings.extend(_sampling_findings(call))
        if call.dropped:
            message = f"call {call.index}: the engine never saw {', '.join(call.dropped)}"
            report.findings.append(Finding("info", "dropped", message, call.index))
    sequences = assemble_sequences(ordered)
    report.sequences = len(sequences)
    report.sampled_tokens = sum(sum(s.loss_mask) for s in sequences)
    stitched = sum(1 for c in ordered if c.stitched)
    report.findings.append(
        Finding(
            "info",
            "summary",
            f"{len(ordered)} calls in {len(sequences)} sequences, {report.sampled_tokens} sampled "
            f"tokens; {stitched} prompts built from the previous call's ids",
        )
    )
    return report
