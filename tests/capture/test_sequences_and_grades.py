"""Sequences by prefix linking, and the grades of a capture, on records made by hand."""

from __future__ import annotations

from typing import Any

import pytest
from wire_bodies import body_for, post

from openenv_hub.capture import (
    CallRecord,
    CaptureSession,
    TrainingSequence,
    assemble_sequences,
    find_parent,
    grade_capture,
    message_digests,
)


def call(index: int, prompt: list[int], sampled: list[int], **fields: Any) -> CallRecord:
    logprobs = fields.pop("logprobs", [-0.5] * len(sampled))
    sampling = fields.pop("sampling", {})
    return CallRecord(
        index, "chat", False, None, sampling, prompt, sampled, logprobs, "stop", **fields
    )


def test_linked_calls_make_one_sequence_with_the_loss_on_sampled_tokens_only() -> None:
    calls = [
        call(0, [1, 2, 3], [4, 5], logprobs=[-0.1, -0.2]),
        call(1, [1, 2, 3, 4, 5, 6, 7], [8], parent=0, logprobs=[-0.3]),
        call(2, [1, 2, 3, 4, 5, 6, 7, 8, 9], [10, 11], parent=1, logprobs=[-0.4, -0.5]),
    ]
    [sequence] = assemble_sequences(calls)
    assert sequence == TrainingSequence(
        index=0,
        calls=[0, 1, 2],
        input_ids=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        loss_mask=[0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1],
        logprobs=[0.0, 0.0, 0.0, -0.1, -0.2, 0.0, 0.0, -0.3, 0.0, -0.4, -0.5],
    )


def test_a_rewrite_a_branch_and_a_call_without_ids_each_get_their_own_treatment() -> None:
    calls = [
        call(0, [1, 2], [3]),
        call(1, [1, 2, 3, 4], [5], parent=0),
        call(2, [1, 2, 3, 4], [6], parent=0),  # a retry of call 1: a branch of call 0
        call(3, [9, 9], [7]),  # a rewritten history: a new sequence
        call(4, [1], [], logprobs=[]),  # no sampled ids: nothing to train on
    ]
    sequences = assemble_sequences(calls)
    assert [s.calls for s in sequences] == [[0, 1], [2], [3]]
    assert sequences[1].input_ids == [1, 2, 3, 4, 6]
    assert sequences[1].loss_mask == [0, 0, 0, 0, 1]  # call 0's token is counted once, in seq 0


def test_the_parent_is_the_longest_earlier_prefix_and_the_latest_of_equals() -> None:
    calls = [call(0, [1], [2]), call(1, [1, 2, 3], [4]), call(2, [1], [2])]
    assert find_parent([1, 2, 3, 4, 5], calls) == 1
    assert find_parent([1, 2, 5], calls) == 2
    assert find_parent([1, 3], calls) is None
    assert find_parent([1, 2, 3], [call(0, [1, 2], [3, 4])]) is None  # longer than the prompt


def test_a_sound_capture_has_no_fatal_grade_and_a_summary() -> None:
    calls = [call(0, [1, 2], [3]), call(1, [1, 2, 3, 4], [5], parent=0, continues=0)]
    report = grade_capture(calls)
    assert report.ok and (report.calls, report.sequences, report.sampled_tokens) == (2, 1, 2)
    assert report.codes() == ["new_sequence", "summary"]
    assert "2 calls in 1 sequences, 2 sampled tokens" in report.of("info")[-1].message


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ({"prompt": [], "sampled": [3]}, "no_token_ids"),
        ({"sampled": [], "logprobs": []}, "no_token_ids"),
        ({"logprobs": []}, "no_token_ids"),
        ({"continues": 0, "parent": None}, "prefix_break"),
        ({"continues": 0, "parent": None, "stitched": True}, "engine_ignored_prompt"),
        ({"error": "the model engine failed (status 503)", "error_status": 502}, "engine_failed"),
        (
            {"error": "the model engine did not answer within 9 s", "error_status": 504},
            "engine_failed",
        ),
    ],
)
def test_faults_that_spoil_training_data_are_fatal(fault: dict[str, Any], code: str) -> None:
    fields = {"prompt": [1, 2, 3, 9], "sampled": [5], **fault}
    prompt, sampled = fields.pop("prompt"), fields.pop("sampled")
    report = grade_capture([call(0, [1, 2], [3]), call(1, prompt, sampled, **fields)])
    assert not report.ok
    assert [(f.code, f.call) for f in report.of("fatal")] == [(code, 1)]


def test_known_causes_warn_and_settings_inform() -> None:
    template = "the chat template renders the earlier turns differently as the conversation grows"
    calls = [
        call(0, [1, 2], [3], sampling={"top_p": 0.9, "temperature": 0.7, "top_k": -1}),
        call(1, [7, 8], [9], continues=0, link_note=template),
        call(2, [1], [], logprobs=[], error="refused: bad tool", error_status=400),
        call(3, [1, 2, 3], [4], parent=0, continues=0, dropped=["hosted tool 'web_search'"]),
    ]
    report = grade_capture(calls)
    assert report.ok
    warned = [(f.code, f.call) for f in report.of("warn")]
    assert warned == [
        ("sampling_changes_logprobs", 0),
        ("history_rerendered", 1),
        ("call_failed", 2),
    ]
    assert "top_p=0.9" in report.of("warn")[0].message
    informed = {(f.code, f.call) for f in report.of("info")}
    assert {("temperature", 0), ("dropped", 3), ("new_sequence", 0)} <= informed


@pytest.mark.parametrize(
    ("sampling", "named"),
    [
        ({"min_tokens": 8}, "min_tokens=8"),
        ({"response_format": {"type": "json_object"}}, "response_format='json_object'"),
        ({"response_format": {"type": "json_schema", "json_schema": {}}}, "'json_schema'"),
    ],
)
def test_settings_that_constrain_sampling_warn_that_logprobs_are_not_the_policys(
    sampling: dict[str, Any], named: str
) -> None:
    """min_tokens masks the end-of-turn token, a response format masks every token outside
    its grammar: the recorded logprobs are of that masked distribution."""
    report = grade_capture([call(0, [1, 2], [3], sampling=sampling)])
    [warned] = report.of("warn")
    assert warned.code == "sampling_changes_logprobs" and named in warned.message


def test_neutral_min_tokens_and_a_text_format_do_not_warn() -> None:
    neutral = {"min_tokens": 0, "response_format": {"type": "text"}}
    assert grade_capture([call(0, [1, 2], [3], sampling=neutral)]).of("warn") == []


def test_a_response_format_is_recorded_with_the_sampling_and_reaches_the_engine(
    fake_engine: Any, fake_proxy: Any
) -> None:
    session = fake_proxy.open_session()
    schema = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    body = {**body_for("chat"), "min_tokens": 4, "response_format": schema}
    assert post(fake_proxy.url, "chat", session.key, body).status_code == 200
    assert session.calls[0].sampling["response_format"] == schema
    sent = fake_engine.app.state.requests[-1]["body"]
    assert (sent["response_format"], sent["min_tokens"]) == (schema, 4)
    assert session.report().codes("warn") == ["sampling_changes_logprobs"]


def test_records_round_trip_as_plain_data() -> None:
    original = call(
        0, [1, 2], [3], sampling={"seed": 1}, messages=[{"role": "user", "content": "x"}]
    )
    assert CallRecord.from_dict(original.as_dict()) == original
    [sequence] = assemble_sequences([original])
    assert TrainingSequence.from_dict(sequence.as_dict()) == sequence


def test_the_conversation_of_a_long_chain_is_rebuilt_from_its_records() -> None:
    session = CaptureSession("cap-key", "rollout-1", max_calls=5000)
    for index in range(3000):
        user = {"role": "user", "content": f"turn {index}"}
        record = call(index, [index], [index], continues=index - 1 if index else None)
        record.messages, record.reply = [user], {"role": "assistant", "content": f"answer {index}"}
        session.add(record, message_digests([user]))
    conversation = session.conversation(2999)
    assert len(conversation) == 2 * 3000 - 1
    assert conversation[:3] == [
        {"role": "user", "content": "turn 0"},
        {"role": "assistant", "content": "answer 0"},
        {"role": "user", "content": "turn 1"},
    ]
