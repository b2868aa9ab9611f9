"""What a trainer that re-tokenises text would have trained on, against what the proxy captured.

For each call of a rollout, the text way renders the conversation (the harness's messages,
then the answer as text) with the chat template and tokenises it. It breaks where the tokens
of the answer so rendered are not the tokens the model sampled (a BPE merge across two sampled
tokens, a tool call the template writes differently, bytes that were not valid UTF-8), and
where the prompt so rendered is not the prompt the model ran (an earlier answer broke).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openenv_hub.capture import CaptureSession, ChatTokenizer


@dataclass
class TextBreaks:
    """Calls where re-tokenising text gives other ids than the engine's."""

    calls: int = 0
    answers: list[int] = field(default_factory=list)  # answer re-tokenised != sampled ids
    prompts: list[int] = field(default_factory=list)  # prompt re-rendered != prompt the model ran

    @property
    def broken(self) -> bool:
        return bool(self.answers or self.prompts)


def text_breaks(
    session: CaptureSession, tokenizer: ChatTokenizer, tools: list[dict[str, Any]]
) -> TextBreaks:
    """The calls of ``session`` (whose tools were ``tools``) whose ids the text way gets
    wrong."""
    found = TextBreaks()
    for call in session.calls:
        if not call.sampled_ids:
            continue
        found.calls += 1
        messages = session.conversation(call.index)
        before = tokenizer.encode(tokenizer.render(messages, tools, add_generation_prompt=True))
        after = tokenizer.encode(
            tokenizer.render([*messages, call.reply], tools, add_generation_prompt=False)
        )
        if before != call.prompt_ids:
            found.prompts.append(call.index)
        answer = after[len(before) :] if after[: len(before)] == before else []
        if answer[: len(call.sampled_ids)] != call.sampled_ids:
            found.answers.append(call.index)
    return found
