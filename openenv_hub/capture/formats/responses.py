"""OpenAI's Responses API (``POST /v1/responses``), as Codex CLI speaks it, translated to chat
completions and back.

Request: ``instructions`` becomes the system message; ``input`` (a string, or items) becomes
messages: ``message`` items by role (``developer`` as ``system``), ``function_call`` and
``custom_tool_call`` items the tool calls of an assistant message (joined to the assistant
message just before them), their ``*_output`` items ``tool`` messages. ``reasoning`` items and
hosted tools (web search, image generation, tool search) cannot reach the engine and are named
in the record's ``dropped``. Function tools become chat function tools; the function tools of a
``namespace`` tool are offered by their own names (the answer names the namespace again); a
``custom`` (free-form) tool is offered as a function taking one string, ``input``.
``max_output_tokens``, ``temperature`` and ``top_p`` keep their meaning.

Answer: a ``message`` item with one ``output_text`` part (when the model wrote text), then a
``function_call`` (or ``custom_tool_call``) item per tool call, ``call_id`` being the engine's
call id. A stream replays it as ``response.created``, ``response.in_progress``, per item
``response.output_item.added``, its text or argument deltas and ``*.done`` events,
``response.output_item.done``, and ``response.completed``, each with a ``sequence_number``.

Layer: services.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import count
from typing import Any

from openenv_hub.capture.chat_form import ChatCall, EngineReply, ToolCall, TranslationError, text_of
from openenv_hub.capture.formats.base import field_of, list_of, openai_error, sampling_from
from openenv_hub.capture.formats.sse import named_event, pieces
from openenv_hub.capture.records import WireFormat

__all__ = ["OpenAIResponses"]

CUSTOM_PARAMETERS = {
    "type": "object",
    "properties": {"input": {"type": "string", "description": "The tool's whole input."}},
    "required": ["input"],
}
CALL_ITEMS = ("function_call", "custom_tool_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(tool.get("name"), str):
        raise TranslationError("each function tool needs a 'name'")
    function = {"name": tool["name"], "description": tool.get("description") or ""}
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _tools(
    body: dict[str, Any], dropped: list[str], options: dict[str, Any]
) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    namespaces: dict[str, str] = options.setdefault("namespaces", {})
    custom: set[str] = options.setdefault("custom", set())
    for tool in list_of(body, "tools"):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind == "function":
            tools.append(_function(tool))
        elif kind == "namespace":
            for inner in list_of(tool, "tools"):
                if isinstance(inner, dict) and inner.get("type", "function") == "function":
                    tools.append(_function(inner))
                    namespaces[inner["name"]] = str(tool.get("name"))
        elif kind == "custom" and isinstance(tool.get("name"), str):
            description = tool.get("description") or ""
            function = {"name": tool["name"], "description": description}
            function["parameters"] = CUSTOM_PARAMETERS
            tools.append({"type": "function", "function": function})
            custom.add(tool["name"])
        else:
            dropped.append(f"hosted tool {kind!r}")
    return tools


def _message(item: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    role = item.get("role")
    if role not in ("user", "assistant", "system", "developer"):
        raise TranslationError(f"an input message has the unknown role {role!r}")
    content = item.get("content")
    if isinstance(content, list):
        kinds = {p.get("type") for p in content if isinstance(p, dict)}
        if kinds - {"input_text", "output_text", "text"}:
            dropped.append("non-text input content")
    return {"role": "system" if role == "developer" else role, "content": text_of(content)}


def _call(item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
        raise TranslationError(f"a {item.get('type')} item needs a 'call_id' and a 'name'")
    if item["type"] == "custom_tool_call":
        arguments = json.dumps({"input": item.get("input", "")}, ensure_ascii=False)
    else:
        arguments = item.get("arguments") or "{}"
    function = {"name": item["name"], "arguments": arguments}
    return {"id": item["call_id"], "type": "function", "function": function}


def _output(item: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(item.get("call_id"), str):
        raise TranslationError(f"a {item.get('type')} item needs its 'call_id'")
    return {"role": "tool", "tool_call_id": item["call_id"], "content": text_of(item.get("output"))}


def _messages(body: dict[str, Any], dropped: list[str]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    instructions = field_of(body, "instructions", str)
    if instructions:
        messages.append({"role": "system", "content": instructions})
    given = body.get("input")
    if isinstance(given, str):
        return [*messages, {"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        raise TranslationError("'input' must be a string or a non-empty list of items")
    for item in given:
        if not isinstance(item, dict):
            raise TranslationError("each input item must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            messages.append(_message(item, dropped))
        elif kind in CALL_ITEMS:
            last = messages[-1] if messages else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": ""}
                messages.append(last)
            last.setdefault("tool_calls", []).append(_call(item))
        elif kind in OUTPUT_ITEMS:
            messages.append(_output(item))
        else:
            dropped.append(f"{kind} item")
    return messages


def _tool_choice(body: dict[str, Any]) -> Any:
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    if choice is None or choice in ("auto", "none", "required"):
        return choice
    raise TranslationError("'tool_choice' must be auto, none, required or a function")


class OpenAIResponses:
    """The Responses wire format."""

    name: WireFormat = "responses"

    def parse(self, body: dict[str, Any]) -> ChatCall:
        dropped: list[str] = []
        options: dict[str, Any] = {}
        extra = {}
        if isinstance(body.get("parallel_tool_calls"), bool):
            extra["parallel_tool_calls"] = body["parallel_tool_calls"]
        if body.get("reasoning"):
            dropped.append("reasoning settings")
        return ChatCall(
            messages=_messages(body, dropped),
            tools=_tools(body, dropped, options),
            tool_choice=_tool_choice(body),
            sampling=sampling_from(body, {"max_output_tokens": "max_tokens"}),
            stream=bool(field_of(body, "stream", bool)),
            model=field_of(body, "model", str),
            extra=extra,
            dropped=sorted(set(dropped)),
            options=options,
        )

    def _items(self, call: ChatCall, reply: EngineReply) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if reply.content:
            part = {"type": "output_text", "text": reply.content, "annotations": []}
            items.append(
                {
                    "type": "message",
                    "id": f"msg_{reply.id}",
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        for number, tool_call in enumerate(reply.tool_calls):
            items.append(self._call_item(call, reply, number, tool_call))
        return items

    def _call_item(
        self, call: ChatCall, reply: EngineReply, number: int, tool_call: ToolCall
    ) -> dict[str, Any]:
        item: dict[str, Any] = {"id": f"fc_{reply.id}_{number}", "call_id": tool_call.id}
        item["name"] = tool_call.name
        if tool_call.name in call.options.get("custom", ()):
            item.update(type="custom_tool_call", input=str(tool_call.input().get("input", "")))
        else:
            item.update(type="function_call", arguments=tool_call.arguments)
            namespace = call.options.get("namespaces", {}).get(tool_call.name)
            if namespace:
                item["namespace"] = namespace
        item["status"] = "completed"
        return item

    def answer(self, call: ChatCall, reply: EngineReply) -> dict[str, Any]:
        prompt, sampled = len(reply.prompt_ids), len(reply.sampled_ids)
        cut = reply.finish_reason == "length"
        return {
            "id": f"resp_{reply.id}",
            "object": "response",
            "created_at": reply.created,
            "status": "incomplete" if cut else "completed",
            "incomplete_details": {"reason": "max_output_tokens"} if cut else None,
            "error": None,
            "model": call.model or "",
            "output": self._items(call, reply),
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": sampled,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": prompt + sampled,
            },
        }

    def stream(self, call: ChatCall, reply: EngineReply) -> Iterator[bytes]:
        numbers = count()
        whole = self.answer(call, reply)
        opening = {**whole, "status": "in_progress", "output": [], "usage": None}
        for kind in ("response.created", "response.in_progress"):
            yield named_event({"type": kind, "sequence_number": next(numbers), "response": opening})
        for index, item in enumerate(whole["output"]):
            for event in self._item_events(index, item):
                yield named_event({**event, "sequence_number": next(numbers)})
        yield named_event(
            {"type": "response.completed", "sequence_number": next(numbers), "response": whole}
        )

    def _item_events(self, index: int, item: dict[str, Any]) -> Iterator[dict[str, Any]]:
        where = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            yield {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            }
            part = item["content"][0]
            at = {**where, "content_index": 0}
            yield {"type": "response.content_part.added", **at, "part": {**part, "text": ""}}
            for piece in pieces(part["text"]):
                yield {"type": "response.output_text.delta", **at, "delta": piece}
            yield {"type": "response.output_text.done", **at, "text": part["text"]}
            yield {"type": "response.content_part.done", **at, "part": part}
        else:
            custom = item["type"] == "custom_tool_call"
            field, event = (
                ("input", "custom_tool_call_input")
                if custom
                else ("arguments", "function_call_arguments")
            )
            yield {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, field: "", "status": "in_progress"},
            }
            for piece in pieces(item[field]):
                yield {"type": f"response.{event}.delta", **where, "delta": piece}
            yield {"type": f"response.{event}.done", **where, field: item[field]}
        yield {"type": "response.output_item.done", "output_index": index, "item": item}

    def error(self, status: int, message: str) -> dict[str, Any]:
        return openai_error(status, message)
