"""openenv_hub.trl's captured rollouts as TRL's completions, on records made by hand: the
split where the model first sampled, the mask over sampled tokens only, the engine's logprobs,
and every rollout that cannot be trained on left out with its reason (the trainer itself runs
against vLLM in test_capture_trainer.py)."""

from __future__ import annotations

from typing import Any

import pytest

from openenv_hub.capture import CallRecord
from openenv_hub.trl import (
    CapturedRollout,
    RolloutRequest,
    completion_of,
    rollout_batch,
    rollout_reward,
    untrainable,
)

EOS = 2
FILLER = 0


def call(index: int, prompt: list[int], sampled: list[int], **fields: Any) -> CallRecord:
    logprobs = [-0.1 * (index + 1) - 0.01 * n for n in range(len(sampled))]
    fields.setdefault("sampling", {"temperature": 1.0})
    return CallRecord(index, "chat", False, None, prompt_ids=prompt, sampled_ids=sampled,
                      logprobs=logprobs, finish_reason="stop", **fields)  # fmt: skip


# A tool call (sampled), its result (inserted by the harness), the answer (sampled).
FIRST = call(0, [1, 3, 4], [10, 11, EOS])
SECOND = call(1, [1, 3, 4, 10, 11, EOS, 20, 21, 22], [12, EOS], parent=0, continues=0)


def rollout(*calls: CallRecord, reward: float | None = 1.0) -> CapturedRollout:
    return CapturedRollout.from_calls("rollout-1", calls, reward=reward)


def test_a_multi_turn_sequence_splits_where_the_model_first_sampled() -> None:
    [sequence] = rollout(FIRST, SECOND).sequences
    assert sequence.loss_mask == [0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1]
    completion = completion_of(sequence)
    assert completion.prompt_ids == [1, 3, 4]
    assert completion.completion_ids == [10, 11, EOS, 20, 21, 22, 12, EOS]
    assert completion.env_mask == [1, 1, 1, 0, 0, 0, 1, 1]  # the tool result is masked out
    engine = FIRST.logprobs + [0.0] * 3 + SECOND.logprobs
    assert completion.logprobs == engine
    whole = completion.prompt_ids + completion.completion_ids
    assert whole == sequence.input_ids
    assert [0] * len(completion.prompt_ids) + completion.env_mask == sequence.loss_mask


def test_a_batch_holds_one_completion_per_rollout_with_its_reward() -> None:
    batch, left_out = rollout_batch(
        [rollout(FIRST, SECOND, reward=0.5), rollout(FIRST, reward=None)],
        temperature=1.0,
        filler_id=FILLER,
    )
    assert left_out == []
    assert batch["prompt_ids"] == [[1, 3, 4], [1, 3, 4]]
    assert batch["completion_ids"] == [[10, 11, EOS, 20, 21, 22, 12, EOS], [10, 11, EOS]]
    assert batch["env_mask"] == [[1, 1, 1, 0, 0, 0, 1, 1], [1, 1, 1]]
    assert batch["rollout_reward"] == [0.5, None]
    assert batch["rollout_name"] == ["rollout-1", "rollout-1"]
    assert rollout_reward([None, None], **batch) == [0.5, None]


NO_IDS = call(1, [], [], continues=0)
BROKEN = call(1, [1, 3, 5, 10, 11, EOS, 20], [12, EOS], continues=0)  # its prompt re-rendered
OTHER_CONVERSATION = call(1, [1, 7, 8], [12, EOS])
HOTTER = call(1, SECOND.prompt_ids, [12, EOS], parent=0, continues=0, sampling={"temperature": 0.7})

LEFT_OUT = {
    "the engine gave no ids": ((FIRST, NO_IDS), "no_token_ids", "graded fatal"),
    "a prefix break": ((FIRST, BROKEN), "prefix_break", "graded fatal"),
    "two sequences": ((FIRST, OTHER_CONVERSATION), "several_sequences", "2 token sequences"),
    "no model call": ((), "no_sequence", "no sampled token"),
    "another temperature": ((FIRST, HOTTER), "temperature_differs", "temperature 0.7"),
}


@pytest.mark.parametrize("case", LEFT_OUT)
def test_a_rollout_that_cannot_be_trained_on_is_left_out_with_its_reason(case: str) -> None:
    calls, code, words = LEFT_OUT[case]
    bad = rollout(*calls, reward=1.0)
    good = rollout(FIRST, SECOND, reward=0.0)
    batch, left_out = rollout_batch([good, bad], temperature=1.0, filler_id=FILLER)
    [refused] = left_out
    assert (refused.index, refused.name, refused.code) == (1, "rollout-1", code)
    assert words in refused.reason
    assert untrainable(bad, index=1) == refused
    # Its place keeps a masked-out filler and no reward; the good rollout is untouched.
    assert batch["prompt_ids"][1] == [FILLER] and batch["completion_ids"][1] == [FILLER]
    assert batch["env_mask"][1] == [0] and batch["logprobs"][1] == [0.0]
    assert batch["rollout_reward"] == [0.0, None]
    assert batch["env_mask"][0] == [1, 1, 1, 0, 0, 0, 1, 1]


def test_a_sequence_without_a_sampled_token_cannot_be_split() -> None:
    [sequence] = rollout(FIRST).sequences
    sequence.loss_mask = [0] * len(sequence.loss_mask)
    with pytest.raises(ValueError, match="no sampled token"):
        completion_of(sequence)


@pytest.mark.parametrize(
    ("prompt", "text"),
    [
        ("Write hello.txt", "Write hello.txt"),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "Hi"),
        ([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}], "Hi"),
        ([{"role": "system", "content": "Be brief."}], ""),
    ],
)
def test_a_request_gives_its_prompt_as_text(prompt: Any, text: str) -> None:
    assert RolloutRequest(prompt=prompt).prompt_text == text
