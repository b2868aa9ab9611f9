"""Anthropic's Messages API (``POST /v1/messages``), as Claude Code speaks it, translated to
chat completions and back.

Request: ``system`` (a string or text blocks) becomes the system message; a user message's
``tool_result`` blocks become ``tool`` messages (in order, before the rest of its text); an
assistant message's ``tool_use`` blocks become its ``tool_calls`` (``input`` as JSON text);
``thinking`` blocks and server tools (web search, ...) cannot reach the engine and are named
in the record's ``dropped``. Tools (``name``, ``description``, ``input_schema``) become function
tools; ``tool_choice`` ``auto``/``any``/``tool``/``none`` becomes ``auto``/``required``/a named
function/``none``; ``max_tokens``, ``temperature``, ``top_p``, ``top_k`` and ``stop_sequences``
keep their meaning.

Answer: a text block (when the model wrote text), then one ``tool_use`` block per tool call
with the engine's call id; ``stop_reason`` ``tool_use``, ``max_tokens``, ``stop_sequence`` or
``end_turn``. A stream replays it as ``message_start``, one ``content_block_start`` /
``_delta`` (``text_delta`` or ``input_json_delta``) / ``_stop`` per block, ``message_delta``
and ``message_stop``.

Layer: services.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from openenv_hub.capture.chat_form import ChatCall, EngineReply, TranslationError, text_of
from openenv_hub.capture.formats.base import field_of, list_of, sampling_from
from openenv_hub.capture.formats.sse import named_event, pieces
from openenv_hub.capture.records import WireFormat

__all__ = ["AnthropicMessages"]

TEXT_BLOCKS = ("text",)
SKIPPED_BLOCKS = ("thinking", "redacted_thinking")


def _blocks(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
        raise TranslationError(f"{where}.content must be a string or a list of content blocks")
    for number, block in enumerate(content):
        if block.get("type") == "text" and not isinstance(block.get("text"), str):
            raise TranslationError(
                f"{where}.content[{number}] is a text block whose 'text' is not a string"
            )
    return content


def _system(body: dict[str, Any]) -> list[dict[str, Any]]:
    system = body.get("system")
    if system is None:
        return []
    text = "\n\n".join(b["text"] for b in _blocks(system, "system") if b.get("type") == "text")
    return [{"role": "system", "content": text}]


def _tool_result(block: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    if not isinstance(block.get("tool_use_id"), str):
        raise TranslationError("a tool_result block needs its 'tool_use_id'")
    content = block.get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") not in TEXT_BLOCKS for b in content):
            dropped.append("non-text tool result content")
        content = text_of([b for b in content if isinstance(b, dict) and b.get("type") == "text"])
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": text_of(content)}


def _user(blocks: list[dict[str, Any]], dropped: list[str]) -> list[dict[str, Any]]:
    results = [_tool_result(b, dropped) for b in blocks if b.get("type") == "tool_result"]
    texts = [b for b in blocks if b.get("type") == "text"]
    others = {str(b.get("type")) for b in blocks} - {"text", "tool_result"}
    dropped.extend(f"{kind} block" for kind in sorted(others))
    if texts or not results:
        results.append({"role": "user", "content": "\n\n".join(b["text"] for b in texts)})
    return results


def _assistant(blocks: list[dict[str, Any]], dropped: list[str]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    texts, calls = [], []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise TranslationError("a tool_use block needs an 'id' and a 'name'")
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            function = {"name": block["name"], "arguments": arguments}
            calls.append({"id": block["id"], "type": "function", "function": function})
        else:
            dropped.append(f"{kind} block")
    message["content"] = "".join(texts)
    if calls:
        message["tool_calls"] = calls
    return message


def _messages(body: dict[str, Any], dropped: list[str]) -> list[dict[str, Any]]:
    messages = _system(body)
    given = list_of(body, "messages")
    if not given:
        raise TranslationError("'messages' must be a non-empty list of messages")
    for number, message in enumerate(given):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise TranslationError(f"messages[{number}] must have the role 'user' or 'assistant'")
        blocks = _blocks(message.get("content", ""), f"messages[{number}]")
        if message["role"] == "user":
            messages.extend(_user(blocks, dropped))
        else:
            messages.append(_assistant(blocks, dropped))
    return messages


def _tools(body: dict[str, Any], dropped: list[str]) -> list[dict[str, Any]]:
    tools = []
    for tool in list_of(body, "tools"):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise TranslationError("each tool needs a 'name'")
        if tool.get("type") not in (None, "custom"):
            dropped.append(f"server tool {tool['name']!r}")
            continue
        function = {"name": tool["name"], "description": tool.get("description", "")}
        function["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        tools.append({"type": "function", "function": function})
    return tools


def _tool_choice(body: dict[str, Any], extra: dict[str, Any]) -> Any:
    choice = field_of(body, "tool_choice", dict)
    if choice is None:
        return None
    if choice.get("disable_parallel_tool_use"):
        extra["parallel_tool_calls"] = False
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": field_of(choice, "name", str)}}
    named = {"auto": "auto", "any": "required", "none": "none"}
    if not isinstance(kind, str) or kind not in named:
        raise TranslationError("'tool_choice.type' must be auto, any, tool or none")
    return named[kind]


class AnthropicMessages:
    """The Anthropic Messages wire format."""

    name: WireFormat = "messages"

    def parse(self, body: dict[str, Any]) -> ChatCall:
        if field_of(body, "max_tokens", int) is None:
            raise TranslationError("'max_tokens' is required")
        dropped: list[str] = []
        extra: dict[str, Any] = {}
        messages = _messages(body, dropped)
        if body.get("thinking"):
            dropped.append("extended thinking")
        return ChatCall(
            messages=messages,
            tools=_tools(body, dropped),
            tool_choice=_tool_choice(body, extra),
            sampling=sampling_from(body, {"max_tokens": "max_tokens", "stop_sequences": "stop"}),
            stream=bool(field_of(body, "stream", bool)),
            model=field_of(body, "model", str),
            extra=extra,
            dropped=sorted(set(dropped)),
            options={"stop_sequences": field_of(body, "stop_sequences", list) or []},
        )

    def _stop(self, call: ChatCall, reply: EngineReply) -> tuple[str, str | None]:
        if reply.tool_calls:
            return "tool_use", None
        if reply.finish_reason == "length":
            return "max_tokens", None
        if (
            isinstance(reply.stop_reason, str)
            and reply.stop_reason in call.options["stop_sequences"]
        ):
            return "stop_sequence", reply.stop_reason
        return "end_turn", None

    def _content(self, reply: EngineReply) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        if reply.content:
            content.append({"type": "text", "text": reply.content})
        for tool_call in reply.tool_calls:
            content.append(
                {
                    "type": "tool_use",
                    "id": tool_call.id,
                    "name": tool_call.name,
                    "input": tool_call.input(),
                }
            )
        return content

    def answer(self, call: ChatCall, reply: EngineReply) -> dict[str, Any]:
        stop_reason, stop_sequence = self._stop(call, reply)
        return {
            "id": f"msg_{reply.id}",
            "type": "message",
            "role": "assistant",
            "model": call.model or "",
            "content": self._content(reply),
            "stop_reason": stop_reason,
            "stop_sequence": stop_sequence,
            "usage": {
                "input_tokens": len(reply.prompt_ids),
                "output_tokens": len(reply.sampled_ids),
            },
        }

    def stream(self, call: ChatCall, reply: EngineReply) -> Iterator[bytes]:
        whole = self.answer(call, reply)
        start = {**whole, "content": [], "stop_reason": None, "stop_sequence": None}
        start["usage"] = {"input_tokens": len(reply.prompt_ids), "output_tokens": 0}
        yield named_event({"type": "message_start", "message": start})
        for index, block in enumerate(whole["content"]):
            opening: dict[str, Any]
            if block["type"] == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
            else:
                opening = {**block, "input": {}}
                arguments = json.dumps(block["input"], ensure_ascii=False)
                deltas = [
                    {"type": "input_json_delta", "partial_json": p} for p in pieces(arguments)
                ]
            yield named_event(
                {"type": "content_block_start", "index": index, "content_block": opening}
            )
            for delta in deltas:
                yield named_event({"type": "content_block_delta", "index": index, "delta": delta})
            yield named_event({"type": "content_block_stop", "index": index})
        delta = {"stop_reason": whole["stop_reason"], "stop_sequence": whole["stop_sequence"]}
        usage = {"output_tokens": len(reply.sampled_ids)}
        yield named_event({"type": "message_delta", "delta": delta, "usage": usage})
        yield named_event({"type": "message_stop"})

    def error(self, status: int, message: str) -> dict[str, Any]:
        kinds = {
            400: "invalid_request_error",
            401: "authentication_error",
            404: "not_found_error",
            408: "timeout_error",
            413: "request_too_large",
            429: "rate_limit_error",
        }
        kind = kinds.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
