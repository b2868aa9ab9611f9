"""Prompts built from ids: the previous call's prompt, what the model sampled, then the new
turns, so the model's own tokens are never re-tokenised from their text.

When a harness sends the conversation back with the model's answer and new turns (tool
results, a user message), an engine that renders the messages again tokenises the answer
from its text. The ids can differ from the ones sampled (a BPE merge across what were two
tokens, a tool call re-serialised by the chat template, a byte sequence that was not valid
UTF-8), and then the prompt no longer continues the sequence the model produced: the capture
splits there, and a trainer that re-tokenises text trains on tokens the model never saw.

:func:`stitch` avoids it: the prompt is the earlier call's ``prompt_ids + sampled_ids``, then
the ids of what the chat template puts after the answer. That tail comes from rendering the
conversation twice with the model's chat template, up to the answer and to the end, and
tokenising only the text after the answer's end-of-turn token (a special token, so the text
after it tokenises the same alone as in the whole). When the model's last sampled token is
not that end-of-turn token (the answer was cut at ``max_tokens``, or by a stop string), the
tail starts with it, as the template would close the turn.

:class:`ChatTokenizer` is the model's tokenizer and chat template, loaded with ``transformers``
from the folder (or Hub id) the engine serves.

Layer: services.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openenv_hub.capture.chat_form import text_of
from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError

__all__ = ["ChatTokenizer", "Stitched", "stitch"]


def _template_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message as vLLM hands it to a chat template: text parts joined, tool-call arguments
    as JSON objects."""
    shaped = dict(message)
    if isinstance(shaped.get("content"), list):
        shaped["content"] = text_of(shaped["content"])
    calls = []
    for call in shaped.get("tool_calls") or []:
        function = dict(call.get("function") or {})
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                function["arguments"] = json.loads(arguments or "{}")
            except json.JSONDecodeError:
                function["arguments"] = {}
        calls.append({**call, "function": function})
    if calls:
        shaped["tool_calls"] = calls
    return shaped


class ChatTokenizer:
    """A model's tokenizer and chat template, for :func:`stitch`.

    Args:
        source: The folder the engine serves the model from (or its Hub id).
        end_of_turn: The special token the chat template ends an assistant turn with (the
            tokenizer's ``eos_token`` by default: ``<|im_end|>`` for Qwen, ``<|eot_id|>`` for
            Llama 3).
    """

    def __init__(self, source: str | os.PathLike[str], *, end_of_turn: str | None = None) -> None:
        try:
            from transformers import AutoTokenizer
        except ImportError:
            raise DependencyNotInstalledError(
                "transformers", "capture", feature="Building prompts from token ids"
            ) from None
        self._tokenizer = AutoTokenizer.from_pretrained(str(source))
        if not getattr(self._tokenizer, "chat_template", None):
            raise ConfigurationError(f"The tokenizer at {source} has no chat template")
        self.end_of_turn: str = end_of_turn or str(self._tokenizer.eos_token)
        found: Any = self._tokenizer.convert_tokens_to_ids(self.end_of_turn)
        self.end_of_turn_id = int(found)
        #: Whether finding the answer's end from the earlier call's prompt text was seen to give
        #: the cut that rendering the conversation up to the answer gives (see :func:`stitch`).
        self.quick_cut_checked = False

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        *,
        add_generation_prompt: bool,
    ) -> str:
        """The conversation as the chat template writes it."""
        text = self._tokenizer.apply_chat_template(
            [_template_message(m) for m in messages],
            tools=list(tools) or None,
            tokenize=False,
            add_generation_prompt=add_generation_prompt,
        )
        return str(text)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``, special tokens written in it included, nothing added."""
        return list(self._tokenizer.encode(text, add_special_tokens=False))


@dataclass(frozen=True)
class Stitched:
    """What :func:`stitch` made: the prompt's ids (None, and why in ``note``, when the template
    does not allow it), and the template's text of the call's messages (``text``), which the
    next call that continues this one passes back as ``earlier_text``."""

    ids: list[int] | None
    note: str | None = None
    text: str | None = None


def stitch(
    *,
    prompt_ids: Sequence[int],
    sampled_ids: Sequence[int],
    messages: Sequence[dict[str, Any]],
    answer_at: int,
    tools: Sequence[dict[str, Any]],
    tokenizer: ChatTokenizer,
    earlier_text: str | None = None,
) -> Stitched:
    """The prompt of a call that continues an earlier one, as ids.

    Args:
        prompt_ids: The earlier call's prompt.
        sampled_ids: What it sampled.
        messages: This call's messages; ``messages[answer_at]`` is the earlier call's answer
            as the harness sent it back, and what follows it is new.
        answer_at: Where the earlier answer is in ``messages``.
        tools: This call's tools, in chat completions form.
        tokenizer: The model's tokenizer and chat template.
        earlier_text: The earlier call's :attr:`Stitched.text`, when it has one: the answer's
            turn then starts where it ends, which spares rendering the conversation a second
            time (once this template was seen to give the same cut both ways).

    Returns:
        The ids; or no ids, and why, when the template does not allow it: it renders the
        earlier turns differently once the conversation grows, or ends the answer's turn with
        no end-of-turn token.
    """
    whole = tokenizer.render(messages, tools, add_generation_prompt=True)
    quick = _answer_end(whole, earlier_text, tokenizer)
    if quick >= 0 and tokenizer.quick_cut_checked:
        closing = quick
    else:
        upto = tokenizer.render(messages[: answer_at + 1], tools, add_generation_prompt=False)
        if not whole.startswith(upto):
            note = (
                "the chat template renders the earlier turns differently as the conversation grows"
            )
            return Stitched(None, note)
        closing = upto.rfind(tokenizer.end_of_turn)
        if closing < 0 or upto[closing:].strip() != tokenizer.end_of_turn:
            note = f"the chat template does not end the answer's turn with {tokenizer.end_of_turn}"
            return Stitched(None, note)
        tokenizer.quick_cut_checked = tokenizer.quick_cut_checked or quick == closing
    if sampled_ids and sampled_ids[-1] == tokenizer.end_of_turn_id:
        closing += len(tokenizer.end_of_turn)
    tail = tokenizer.encode(whole[closing:])
    return Stitched([*prompt_ids, *sampled_ids, *tail], None, whole)


def _answer_end(whole: str, earlier_text: str | None, tokenizer: ChatTokenizer) -> int:
    """Where the answer's end-of-turn token is in ``whole``, found from the earlier call's
    prompt text (the answer's turn starts where it ends); -1 when that text is not a prefix."""
    if not earlier_text or not whole.startswith(earlier_text):
        return -1
    return whole.find(tokenizer.end_of_turn, len(earlier_text))
