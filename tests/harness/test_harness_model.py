"""The harness tests' tiny model answers Claude Code's and Codex's prompt ends on any day: both
harnesses name the date near the end of their first request, and the model was fine-tuned on a
few dates only (tests/harness/harness_model.py), so a run on another day would otherwise be a
different test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.vllm_engine import Engine
from harness_model import BASH, CLAUDE_END, CODEX_CONTEXT, DATES, REPLY_TASK

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]

#: Days the model was not fine-tuned on, and a system prompt unlike the one it was.
OTHER_DATES = ("2026-12-05", "2027-01-01", "2029-02-28", "2031-09-30")
OTHER_SYSTEM = "Instructions of some length. " * 40


def ends(date: str) -> dict[str, list[dict[str, Any]]]:
    system = {"role": "system", "content": OTHER_SYSTEM}
    return {
        "claude": [system, {"role": "user", "content": CLAUDE_END.format(date=date)}],
        "codex": [
            system,
            {"role": "user", "content": CODEX_CONTEXT.format(date=date)},
            {"role": "user", "content": REPLY_TASK},
        ],
    }


@pytest.mark.parametrize("date", OTHER_DATES)
def test_the_model_answers_the_long_prompt_ends_on_another_day(
    harness_engine: Engine, harness_model_folder: Path, date: str
) -> None:
    from transformers import AutoTokenizer

    assert date not in DATES
    tokenizer = AutoTokenizer.from_pretrained(str(harness_model_folder))
    for harness, messages in ends(date).items():
        prompt = tokenizer.apply_chat_template(
            messages, tools=[BASH], add_generation_prompt=True, return_dict=False
        )
        body = {"model": harness_engine.model, "prompt": list(prompt), "temperature": 0}
        answer = httpx.post(
            f"{harness_engine.base_url}/completions", json={**body, "max_tokens": 16}, timeout=60
        ).json()["choices"][0]
        assert (answer["text"], answer["finish_reason"]) == ("done", "stop"), harness
