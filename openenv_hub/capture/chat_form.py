"""The one form every wire format is translated into: a model call in chat completions terms.

A harness's request becomes a :class:`ChatCall` (messages and tools as chat completions has
them, the sampling parameters under the engine's names); the engine's answer becomes an
:class:`EngineReply` (the text, the tool calls, and the token ids and logprobs the proxy
records). Each wire format (:mod:`openenv_hub.capture.formats`) translates to the first and
from the second, so the proxy's capture logic sees one shape only.

:func:`message_digests` makes the fingerprints by which the proxy recognises that a request's
messages continue an earlier call: the same roles, texts (surrounding whitespace aside) and
tool calls (name and arguments as JSON values; ids aside, since a harness may renumber them).

Layer: services.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ChatCall",
    "EngineReply",
    "ToolCall",
    "TranslationError",
    "message_digests",
    "next_digest",
    "offer_digest",
    "text_of",
]


class TranslationError(ValueError):
    """A request the proxy cannot translate; its message says what was wrong (a 400)."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call of the model: an id, the tool's name and its arguments as JSON text."""

    id: str
    name: str
    arguments: str

    def as_chat(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": self.arguments}
        return {"id": self.id, "type": "function", "function": function}

    def input(self) -> dict[str, Any]:
        """The arguments as a JSON object ({} when they are not one)."""
        try:
            value = json.loads(self.arguments or "{}")
        except (json.JSONDecodeError, RecursionError):
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ChatCall:
    """One harness request in chat completions terms.

    Attributes:
        messages: The conversation, as chat completions messages.
        tools: The tools, as chat completions function tools.
        tool_choice: As chat completions takes it (``"auto"``, ``"none"``, ``"required"`` or
            ``{"type": "function", "function": {"name": ...}}``), or None.
        sampling: Sampling parameters under the engine's names (``max_tokens``, ``stop``,
            ``response_format``, ...).
        stream: Whether the harness asked for a stream.
        model: The model name the harness asked for.
        top_logprobs: How many alternatives per token the harness asked for, when it asked
            for logprobs itself (chat completions only); None otherwise.
        extra: Other chat completions fields passed to the engine as they are
            (``parallel_tool_calls``).
        dropped: What the request held that the engine cannot take.
        options: What the wire format needs to answer in kind (tool namespaces, stream
            options, ...).
    """

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    sampling: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    model: str | None = None
    top_logprobs: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def tool_names(self) -> list[str]:
        return [str(t.get("function", {}).get("name")) for t in self.tools]


@dataclass
class EngineReply:
    """The engine's answer to one call.

    Attributes:
        id: An id for the answer (the wire formats prefix it as they do).
        created: When it was made (seconds since the epoch).
        content: The text the model wrote (tool calls parsed out of it).
        reasoning: Reasoning text, when the engine parses it out.
        tool_calls: The tool calls the engine parsed from the text.
        finish_reason: ``"stop"``, ``"length"`` or ``"tool_calls"``.
        stop_reason: The stop string or token that ended it, when the engine says.
        prompt_ids: The prompt the engine ran, as token ids.
        sampled_ids: The tokens it sampled.
        logprobs: The logprob of each sampled token.
        token_logprobs: The engine's per-token logprob entries as it sent them (returned to a
            chat completions harness that asked for logprobs).
    """

    id: str
    created: int
    content: str | None
    reasoning: str | None
    tool_calls: list[ToolCall]
    finish_reason: str
    stop_reason: str | int | None
    prompt_ids: list[int]
    sampled_ids: list[int]
    logprobs: list[float]
    token_logprobs: list[dict[str, Any]] = field(default_factory=list)

    def as_message(self) -> dict[str, Any]:
        """The answer as a chat completions assistant message."""
        message: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            message["tool_calls"] = [call.as_chat() for call in self.tool_calls]
        return message


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text of its parts, one per line."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return "\n".join(texts)
    return str(content)


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return value
    return value


def _canonical(message: dict[str, Any]) -> bytes:
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append([function.get("name"), _arguments(function.get("arguments"))])
    role = message.get("role")
    key = [role, text_of(message.get("content")).strip(), calls]
    return json.dumps(key, sort_keys=True, ensure_ascii=False, default=str).encode()


def next_digest(previous: bytes, message: dict[str, Any]) -> bytes:
    """The fingerprint of a conversation one message longer than the one ``previous`` stands
    for."""
    return hashlib.sha256(previous + _canonical(message)).digest()


def message_digests(messages: Sequence[dict[str, Any]]) -> list[bytes]:
    """Fingerprints of every prefix of ``messages``: item ``i`` stands for the first ``i``
    messages (item 0 for none), so two conversations share a prefix of ``i`` messages exactly
    when their item ``i`` is equal."""
    digests = [hashlib.sha256(b"conversation").digest()]
    for message in messages:
        digests.append(next_digest(digests[-1], message))
    return digests


def offer_digest(tools: Sequence[dict[str, Any]], tool_choice: Any) -> bytes:
    """The fingerprint of what a call offers the model besides its messages (its tools and
    tool choice): a call continues an earlier one only when they offer the same, since the chat
    template writes the tools into the prompt the earlier call's ids hold."""
    offered = json.dumps(
        [list(tools), tool_choice], sort_keys=True, ensure_ascii=False, default=str
    )
    return hashlib.sha256(offered.encode()).digest()
