"""A turn's model calls, as the capture proxy recorded them, told as harness events: each call's
request and answer, the tool calls the model asked for, and the tool results the harness sent
back in its next call. These come from the proxy, not from the harness's own output, so a
harness cannot claim calls it did not make.

Layer: client.
"""

from __future__ import annotations

import json
from typing import Any

from openenv_hub.capture import CallRecord
from openenv_hub.harness.events import HarnessEvent, HarnessEventType

__all__ = ["call_events"]

_MAX_TEXT = 4000  # characters of a message or result kept in an event


def _text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, list):
        text = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in value)
    elif value is None:
        text = ""
    else:
        text = json.dumps(value, default=str)
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT] + " ..."


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def call_events(call: CallRecord, names: dict[str, str]) -> list[HarnessEvent]:
    """The events of one recorded call. ``names`` maps tool-call ids to tool names across the
    episode (filled here from the model's calls, read here for the harness's results)."""
    stamp = call.started_at or None
    events = []
    for message in call.messages:
        if message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "")
            data = {"call": call.index, "tool_name": name, "result": _text(message.get("content"))}
            events.append(_event(HarnessEventType.TOOL_RESULT, data, stamp))
    request = {
        "call": call.index,
        "wire": call.wire,
        "model": call.model,
        "messages": [
            {"role": m.get("role"), "content": _text(m.get("content"))} for m in call.messages
        ],
        "prompt_tokens": len(call.prompt_ids),
    }
    events.append(_event(HarnessEventType.LLM_REQUEST, request, stamp))
    reply = call.reply or {}
    tool_calls = []
    for tool_call in reply.get("tool_calls") or []:
        function = tool_call.get("function") or {}
        name = str(function.get("name", ""))
        names[str(tool_call.get("id"))] = name
        tool_calls.append({"tool_name": name, "arguments": _arguments(function.get("arguments"))})
    response = {
        "call": call.index,
        "content": _text(reply.get("content")),
        "tool_calls": tool_calls,
        "finish_reason": call.finish_reason,
        "sampled_tokens": len(call.sampled_ids),
        "error": call.error,
    }
    events.append(_event(HarnessEventType.LLM_RESPONSE, response, stamp))
    for tool_call in tool_calls:
        events.append(_event(HarnessEventType.TOOL_CALL, {"call": call.index, **tool_call}, stamp))
    return events


def _event(kind: HarnessEventType, data: dict[str, Any], stamp: float | None) -> HarnessEvent:
    return (
        HarnessEvent(type=kind, data=data)
        if stamp is None
        else HarnessEvent(type=kind, data=data, timestamp=stamp)
    )
