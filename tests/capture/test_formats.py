"""The three wire formats, translated to chat completions and back, on requests shaped as
mini-swe-agent (chat completions), Claude Code (Anthropic Messages) and Codex CLI (Responses)
send them: tool definitions, tool calls and tool results both ways, streams that reassemble to
the whole answer, and a harness's echo of an answer recognised as that answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from wire_bodies import body_for, sse_events

from openenv_hub.capture import ChatCall, EngineReply, ToolCall, TranslationError, message_digests
from openenv_hub.capture.formats import TRANSLATORS

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}


def reply_with(*calls: ToolCall, content: str = "Running it.") -> EngineReply:
    return EngineReply(
        id="r1",
        created=1,
        content=content,
        reasoning=None,
        tool_calls=list(calls),
        finish_reason="tool_calls" if calls else "stop",
        stop_reason=None,
        prompt_ids=[1, 2, 3],
        sampled_ids=[4, 5],
        logprobs=[-0.1, -0.2],
    )


def test_a_mini_swe_agent_request_passes_as_it_is() -> None:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
    ]
    body = {"model": "tiny", "messages": messages, "tools": [BASH], "temperature": 1.0}
    call = TRANSLATORS["chat"].parse({**body, "max_completion_tokens": 32, "stop": "END"})
    assert (call.messages, call.tools) == (messages, [BASH])
    assert call.sampling == {"temperature": 1.0, "max_tokens": 32, "stop": ["END"]}
    assert call.top_logprobs is None and call.dropped == []


def test_a_claude_code_request_becomes_chat_messages_and_tools() -> None:
    cache = {"type": "ephemeral"}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64000,
        "stream": True,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "metadata": {"user_id": "someone"},
        "system": [
            {"type": "text", "text": "You are Claude Code.", "cache_control": cache},
            {"type": "text", "text": "Be brief."},
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "List the files.", "cache_control": cache}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "ls will do", "signature": "sig"},
                    {"type": "text", "text": "I will run ls."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_1",
                        "content": [{"type": "text", "text": "a.txt"}],
                    },
                    {"type": "text", "text": "Go on."},
                ],
            },
        ],
        "tools": [
            {
                "name": "Bash",
                "description": "Run a command.",
                "input_schema": BASH["function"]["parameters"],
            },
            {"type": "web_search_20250305", "name": "web_search"},
        ],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "temperature": 1,
        "stop_sequences": ["END"],
    }
    call = TRANSLATORS["messages"].parse(body)
    tool_call = {"id": "toolu_1", "type": "function"}
    tool_call["function"] = {"name": "Bash", "arguments": '{"command": "ls"}'}
    assert call.messages == [
        {"role": "system", "content": "You are Claude Code.\n\nBe brief."},
        {"role": "user", "content": "List the files."},
        {"role": "assistant", "content": "I will run ls.", "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.txt"},
        {"role": "user", "content": "Go on."},
    ]
    assert call.tools == [{"type": "function", "function": {**BASH["function"], "name": "Bash"}}]
    assert (call.tool_choice, call.extra) == ("required", {"parallel_tool_calls": False})
    assert call.sampling == {"temperature": 1, "max_tokens": 64000, "stop": ["END"]}
    assert call.stream and call.model == "claude-sonnet-4-5"
    assert call.dropped == ["extended thinking", "server tool 'web_search'", "thinking block"]


def test_a_codex_request_becomes_chat_messages_and_tools() -> None:
    shell = {"type": "function", "name": "shell", "description": "Run.", "strict": False}
    shell["parameters"] = {"type": "object", "properties": {"command": {"type": "array"}}}
    grade = {"type": "function", "name": "env_grade", "description": "Grade.", "parameters": {}}
    body = {
        "model": "gpt-5-codex",
        "instructions": "You are Codex.",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "Sandboxed."}],
            },
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "List files."}],
            },
            {"type": "reasoning", "summary": [], "encrypted_content": "opaque"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "shell",
                "arguments": '{"command": ["ls"]}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
            {
                "type": "custom_tool_call",
                "call_id": "call_2",
                "name": "apply_patch",
                "input": "*** Begin",
            },
            {
                "type": "custom_tool_call_output",
                "call_id": "call_2",
                "output": [{"type": "input_text", "text": "ok"}],
            },
        ],
        "tools": [
            shell,
            {
                "type": "namespace",
                "name": "mcp__env",
                "description": "Env tools.",
                "tools": [grade],
            },
            {
                "type": "custom",
                "name": "apply_patch",
                "description": "Patch.",
                "format": {"type": "grammar"},
            },
            {"type": "web_search"},
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": "medium"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
    }
    call = TRANSLATORS["responses"].parse(body)
    first = {"id": "call_1", "type": "function"}
    first["function"] = {"name": "shell", "arguments": '{"command": ["ls"]}'}
    second = {"id": "call_2", "type": "function"}
    second["function"] = {"name": "apply_patch", "arguments": '{"input": "*** Begin"}'}
    assert call.messages == [
        {"role": "system", "content": "You are Codex."},
        {"role": "system", "content": "Sandboxed."},
        {"role": "user", "content": "List files."},
        {"role": "assistant", "content": "", "tool_calls": [first]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        {"role": "assistant", "content": "", "tool_calls": [second]},
        {"role": "tool", "tool_call_id": "call_2", "content": "ok"},
    ]
    assert [t["function"]["name"] for t in call.tools] == ["shell", "env_grade", "apply_patch"]
    assert call.tools[2]["function"]["parameters"]["required"] == ["input"]
    assert call.options["namespaces"] == {"env_grade": "mcp__env"}
    assert call.options["custom"] == {"apply_patch"}
    assert call.dropped == ["hosted tool 'web_search'", "reasoning item", "reasoning settings"]
    assert (call.tool_choice, call.extra, call.stream) == (
        "auto",
        {"parallel_tool_calls": False},
        True,
    )


@pytest.mark.parametrize(
    ("wire", "body", "said"),
    [
        ("chat", {"messages": []}, "'messages' must be a non-empty list"),
        ("chat", {"messages": [{"role": "robot"}]}, "messages[0] must be an object with a 'role'"),
        ("chat", {"messages": [{"role": "user"}], "temperature": "hot"}, "'temperature' must be"),
        ("messages", {"messages": [{"role": "user", "content": "x"}]}, "'max_tokens' is required"),
        ("messages", {"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}, "role"),
        (
            "messages",
            {
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "x"}],
                "tool_choice": {"type": "maybe"},
            },
            "tool_choice",
        ),
        ("responses", {"input": []}, "'input' must be a string or a non-empty list"),
        ("responses", {"input": [{"type": "function_call", "name": "x"}]}, "needs a 'call_id'"),
        ("responses", {"input": "x", "max_output_tokens": 0}, "at least 1"),
    ],
)
def test_a_request_that_cannot_be_translated_says_what_is_wrong(
    wire: str, body: dict[str, Any], said: str
) -> None:
    with pytest.raises(TranslationError, match=said.replace("[", r"\[").replace("]", r"\]")):
        TRANSLATORS[wire].parse(body)


def _chat_stream(events: list[dict[str, Any]]) -> dict[str, Any]:
    text, calls, finish = "", {}, None
    for event in events:
        for choice in event["choices"]:
            delta = choice["delta"]
            text += delta.get("content") or ""
            for part in delta.get("tool_calls") or []:
                one = calls.setdefault(part["index"], {"id": part.get("id"), "arguments": ""})
                one["name"] = part.get("function", {}).get("name") or one.get("name")
                one["arguments"] += part["function"].get("arguments", "")
            finish = choice["finish_reason"] or finish
    return {"content": text, "calls": [calls[i] for i in sorted(calls)], "finish": finish}


def _messages_stream(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if event["type"] == "content_block_start":
            blocks[event["index"]] = {**event["content_block"], "partial": ""}
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            block = blocks[event["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["partial"] += delta["partial_json"]
    for block in blocks.values():
        partial = block.pop("partial")
        if block["type"] == "tool_use":
            block["input"] = json.loads(partial)
    return [blocks[i] for i in sorted(blocks)]


def test_streams_replay_the_whole_answer_in_each_format() -> None:
    reply = reply_with(
        ToolCall("call_a", "bash", json.dumps({"command": "echo " + "x" * 80})),
        content="I will look at the files first, then answer you.",
    )
    chat = ChatCall(messages=[], stream=True, options={"include_usage": True})
    events = sse_events(b"".join(TRANSLATORS["chat"].stream(chat, reply)).decode())
    assert _chat_stream(events) == {
        "content": reply.content,
        "calls": [{"id": "call_a", "name": "bash", "arguments": reply.tool_calls[0].arguments}],
        "finish": "tool_calls",
    }
    assert events[-1]["usage"] == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}

    anthropic = ChatCall(messages=[], stream=True, options={"stop_sequences": []})
    answer = TRANSLATORS["messages"].answer(anthropic, reply)
    events = sse_events(b"".join(TRANSLATORS["messages"].stream(anthropic, reply)).decode())
    assert _messages_stream(events) == answer["content"]
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert events[-2]["delta"]["stop_reason"] == "tool_use" == answer["stop_reason"]

    responses = ChatCall(messages=[], stream=True)
    answer = TRANSLATORS["responses"].answer(responses, reply)
    events = sse_events(b"".join(TRANSLATORS["responses"].stream(responses, reply)).decode())
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == answer["output"] and events[-1]["response"] == answer
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == reply.content


def test_responses_names_namespaced_and_custom_tools_as_codex_declared_them() -> None:
    call = TRANSLATORS["responses"].parse(
        {
            "input": "x",
            "tools": [
                {
                    "type": "namespace",
                    "name": "mcp__env",
                    "tools": [{"type": "function", "name": "env_grade"}],
                },
                {"type": "custom", "name": "apply_patch"},
            ],
        }
    )
    reply = reply_with(
        ToolCall("c1", "env_grade", "{}"), ToolCall("c2", "apply_patch", '{"input": "*** Begin"}')
    )
    message, grade, patch = TRANSLATORS["responses"].answer(call, reply)["output"]
    assert message["content"][0]["text"] == "Running it."
    assert (grade["type"], grade["namespace"], grade["call_id"]) == (
        "function_call",
        "mcp__env",
        "c1",
    )
    assert (patch["type"], patch["input"], patch["call_id"]) == (
        "custom_tool_call",
        "*** Begin",
        "c2",
    )


def _echo(wire: str, answer: dict[str, Any]) -> dict[str, Any]:
    """The next request of a harness that got ``answer``: the answer sent back as it came, each
    tool call's result, then a user turn."""
    if wire == "chat":
        message = answer["choices"][0]["message"]
        results = [
            {"role": "tool", "tool_call_id": c["id"], "content": "done"}
            for c in message["tool_calls"]
        ]
        return {
            "messages": [
                {"role": "user", "content": "Go."},
                message,
                *results,
                {"role": "user", "content": "Next."},
            ]
        }
    if wire == "messages":
        results = [
            {"type": "tool_result", "tool_use_id": b["id"], "content": "done"}
            for b in answer["content"]
            if b["type"] == "tool_use"
        ]
        return {
            "max_tokens": 16,
            "messages": [
                {"role": "user", "content": "Go."},
                {"role": "assistant", "content": answer["content"]},
                {"role": "user", "content": [*results, {"type": "text", "text": "Next."}]},
            ],
        }
    results = [
        {"type": "function_call_output", "call_id": i["call_id"], "output": "done"}
        for i in answer["output"]
        if i["type"] == "function_call"
    ]
    items = [{"type": "message", "role": "user", "content": "Go."}, *answer["output"], *results]
    return {"input": [*items, {"type": "message", "role": "user", "content": "Next."}]}


@pytest.mark.parametrize("wire", ["chat", "messages", "responses"])
def test_an_answer_sent_back_by_the_harness_is_recognised_as_that_answer(wire: str) -> None:
    translator = TRANSLATORS[wire]
    first = translator.parse(body_for(wire, "Go."))
    reply = reply_with(
        ToolCall("call_7", "bash", '{"command": "ls -la"}'),
        ToolCall("call_8", "bash", '{"command": "pwd"}'),
    )
    second = translator.parse(_echo(wire, translator.answer(first, reply)))
    expected = message_digests([*first.messages, reply.as_message()])[-1]
    assert message_digests(second.messages)[len(first.messages) + 1] == expected
    assert [m["role"] for m in second.messages[len(first.messages) + 1 :]] == [
        "tool",
        "tool",
        "user",
    ]
