"""OpenAI chat completions (``POST /v1/chat/completions``), the engine's own form: the request
passes nearly as it is; the answer is rebuilt from the engine's reply without the capture's
fields (token ids, the engine's model name), with logprobs only when the harness asked.

Layer: services.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from openenv_hub.capture.chat_form import ChatCall, EngineReply, TranslationError
from openenv_hub.capture.formats.base import field_of, list_of, openai_error, sampling_from
from openenv_hub.capture.formats.sse import data_event, pieces
from openenv_hub.capture.records import WireFormat

__all__ = ["ChatCompletions"]

#: Chat completions fields passed to the engine as they are (``response_format`` is passed
#: too, among the sampling parameters the record keeps: it constrains what may be sampled).
PASSED = ("parallel_tool_calls",)
ROLES = ("system", "developer", "user", "assistant", "tool")


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = list_of(body, "messages")
    if not messages:
        raise TranslationError("'messages' must be a non-empty list of messages")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise TranslationError(
                f"messages[{number}] must be an object with a 'role' of {', '.join(ROLES)}"
            )
    return [dict(m) for m in messages]


def _tools(body: dict[str, Any], dropped: list[str]) -> list[dict[str, Any]]:
    tools = []
    for number, tool in enumerate(list_of(body, "tools")):
        if not isinstance(tool, dict):
            raise TranslationError(f"tools[{number}] must be an object")
        if tool.get("type", "function") != "function" or not isinstance(tool.get("function"), dict):
            dropped.append(f"tool {tool.get('type')!r}")
            continue
        tools.append(tool)
    return tools


class ChatCompletions:
    """The chat completions wire format."""

    name: WireFormat = "chat"

    def parse(self, body: dict[str, Any]) -> ChatCall:
        if (field_of(body, "n", int) or 1) != 1:
            raise TranslationError("'n' must be 1: the proxy records one answer per call")
        dropped: list[str] = []
        sampling = sampling_from(
            body,
            {"max_completion_tokens": "max_tokens", "max_tokens": "max_tokens", "stop": "stop"},
        )
        response_format = field_of(body, "response_format", dict)
        if response_format is not None:
            sampling["response_format"] = response_format
        wants_logprobs = bool(field_of(body, "logprobs", bool))
        stream_options = field_of(body, "stream_options", dict) or {}
        return ChatCall(
            messages=_messages(body),
            tools=_tools(body, dropped),
            tool_choice=body.get("tool_choice"),
            sampling=sampling,
            stream=bool(field_of(body, "stream", bool)),
            model=field_of(body, "model", str),
            top_logprobs=(field_of(body, "top_logprobs", int) or 0) if wants_logprobs else None,
            extra={name: body[name] for name in PASSED if name in body},
            dropped=dropped,
            options={"include_usage": bool(stream_options.get("include_usage"))},
        )

    def _usage(self, reply: EngineReply) -> dict[str, int]:
        prompt, sampled = len(reply.prompt_ids), len(reply.sampled_ids)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": sampled,
            "total_tokens": prompt + sampled,
        }

    def answer(self, call: ChatCall, reply: EngineReply) -> dict[str, Any]:
        choice: dict[str, Any] = {
            "index": 0,
            "message": reply.as_message(),
            "logprobs": {"content": reply.token_logprobs}
            if call.top_logprobs is not None
            else None,
            "finish_reason": reply.finish_reason,
        }
        if reply.reasoning:
            choice["message"]["reasoning_content"] = reply.reasoning
        return {
            "id": f"chatcmpl-{reply.id}",
            "object": "chat.completion",
            "created": reply.created,
            "model": call.model or "",
            "choices": [choice],
            "usage": self._usage(reply),
        }

    def _chunk(
        self, call: ChatCall, reply: EngineReply, delta: dict[str, Any], **extra: Any
    ) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None, **extra}
        return data_event(
            {
                "id": f"chatcmpl-{reply.id}",
                "object": "chat.completion.chunk",
                "created": reply.created,
                "model": call.model or "",
                "choices": [choice],
            }
        )

    def stream(self, call: ChatCall, reply: EngineReply) -> Iterator[bytes]:
        yield self._chunk(call, reply, {"role": "assistant", "content": ""})
        if reply.reasoning:
            for piece in pieces(reply.reasoning):
                yield self._chunk(call, reply, {"reasoning_content": piece})
        for piece in pieces(reply.content or ""):
            yield self._chunk(call, reply, {"content": piece})
        for number, tool_call in enumerate(reply.tool_calls):
            opening = {"index": number, "id": tool_call.id, "type": "function"}
            opening["function"] = {"name": tool_call.name, "arguments": ""}
            yield self._chunk(call, reply, {"tool_calls": [opening]})
            for piece in pieces(tool_call.arguments):
                part = {"index": number, "function": {"arguments": piece}}
                yield self._chunk(call, reply, {"tool_calls": [part]})
        yield self._chunk(call, reply, {}, finish_reason=reply.finish_reason)
        if call.options.get("include_usage"):
            usage = {
                "id": f"chatcmpl-{reply.id}",
                "object": "chat.completion.chunk",
                "created": reply.created,
                "model": call.model or "",
                "choices": [],
                "usage": self._usage(reply),
            }
            yield data_event(usage)
        yield data_event("[DONE]")

    def error(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message)
