"""Calls a sandboxed harness may send to hurt the proxy or the other rollouts: malformed
requests (a 400 in the wire format's shape, never a traceback), calls too large to handle (a
413 naming the bound and its knob), and a large call's work kept off the event loop every
other session's calls run on."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from wire_bodies import PATHS, body_for, post

from openenv_hub.capture import CaptureProxy, ChatTokenizer

DEEP = 100_000

#: Requests each wire format does not allow, that once got a 500 and a traceback.
MALFORMED = {
    "a text block whose text is a number": (
        "messages",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
        "messages[0].content[0] is a text block whose 'text' is not a string",
    ),
    "a system text block whose text is null": (
        "messages",
        {
            "system": [{"type": "text", "text": None}],
            "messages": [{"role": "user", "content": "hi"}],
        },
        "system.content[0] is a text block whose 'text' is not a string",
    ),
    "an assistant text block whose text is a list": (
        "messages",
        {"messages": [{"role": "assistant", "content": [{"type": "text", "text": []}]}]},
        "messages[0].content[0] is a text block whose 'text' is not a string",
    ),
    "a tool_choice whose type is a list": (
        "messages",
        {"tool_choice": {"type": []}, "messages": [{"role": "user", "content": "hi"}]},
        "'tool_choice.type' must be auto, any, tool or none",
    ),
    "a namespace tool whose tools are a number": (
        "responses",
        {"tools": [{"type": "namespace", "name": "ns", "tools": 5}]},
        "'tools' must be a list",
    ),
}


def _error_message(wire: str, answer: httpx.Response) -> str:
    body = answer.json()
    if wire == "messages":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    return str(body["error"]["message"])


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_gets_a_400_in_its_wire_formats_shape(
    fake_engine: Any, fake_proxy: CaptureProxy, case: str
) -> None:
    wire, fields, said = MALFORMED[case]
    answer = post(fake_proxy.url, wire, fake_proxy.open_session().key, body_for(wire, **fields))
    assert answer.status_code == 400, answer.text
    assert _error_message(wire, answer) == said
    assert fake_engine.app.state.requests == []


@pytest.mark.parametrize("wire", list(PATHS))
def test_json_nested_deeper_than_python_reads_gets_a_400(
    fake_proxy: CaptureProxy, wire: str
) -> None:
    key = fake_proxy.open_session().key
    body = b'{"messages": ' + b"[" * DEEP + b"]" * DEEP + b"}"
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    answer = httpx.post(fake_proxy.url + PATHS[wire], content=body, headers=headers, timeout=60)
    assert answer.status_code == 400
    assert _error_message(wire, answer) == "the request body nests JSON deeper than the proxy reads"


@pytest.mark.parametrize("wire", list(PATHS))
def test_a_failure_inside_the_proxy_is_answered_in_the_wire_shape_and_logged(
    fake_engine: Any, proxies: Any, wire: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A trainer's sampling setting the engine's JSON cannot carry makes every call fail
    inside the proxy: the harness gets its format's 500, the log gets the traceback."""
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", sampling={"seed": {1, 2}})
    with caplog.at_level(logging.ERROR, logger="openenv_hub.capture"):
        answer = post(proxy.url, wire, proxy.open_session().key)
    assert answer.status_code == 500
    body = answer.json()
    assert body["error"]["message"] == "the capture proxy failed on this request (its log says why)"
    assert body["error"]["type"] == ("api_error" if wire == "messages" else "server_error")
    assert "Traceback" not in answer.text and "TypeError" not in answer.text
    [logged] = [r for r in caplog.records if r.exc_info]
    assert "request failed in the proxy" in logged.getMessage()


def test_a_call_past_the_message_or_text_bound_gets_413_naming_the_knob(
    fake_engine: Any, proxies: Any
) -> None:
    proxy = proxies(
        engine_url=f"{fake_engine.url}/v1",
        model="fake",
        max_messages_per_call=50,
        max_text_mb=0.01,
    )
    key = proxy.open_session().key
    many = [{"role": "user", "content": "x"}] * 51
    answer = post(proxy.url, "chat", key, {"model": "m", "messages": many})
    assert answer.status_code == 413
    assert "more than 50 messages" in answer.json()["error"]["message"]
    assert "CaptureProxy(max_messages_per_call=...)" in answer.json()["error"]["message"]
    blocks = [{"type": "text", "text": "x"}] * 60  # one message, many blocks
    refused = post(proxy.url, "messages", key, body_for("messages", blocks))
    assert refused.status_code == 413 and refused.json()["error"]["type"] == "request_too_large"
    long = post(proxy.url, "responses", key, body_for("responses", "x" * 20_000))
    assert long.status_code == 413
    assert "CaptureProxy(max_text_mb=...)" in long.json()["error"]["message"]
    assert post(proxy.url, "chat", key, body_for("chat", "x" * 5_000)).status_code == 200
    assert len(fake_engine.app.state.requests) == 1


class HeldTokenizer(ChatTokenizer):
    """A ChatTokenizer that, rendering a conversation longer than ``hold_chars``, waits for
    ``release`` (it stands for a long render of a large call)."""

    hold_chars = 200_000

    def __init__(self, source: Path) -> None:
        super().__init__(source)
        self.held, self.release = threading.Event(), threading.Event()

    def render(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        *,
        add_generation_prompt: bool,
    ) -> str:
        if len(json.dumps(list(messages))) > self.hold_chars:
            self.held.set()
            self.release.wait(60)
        return super().render(messages, tools, add_generation_prompt=add_generation_prompt)


def test_a_large_calls_work_does_not_hold_the_other_sessions_calls(
    fake_engine: Any, proxies: Any, tiny_chat_model_folder: Path
) -> None:
    """One harness's large call (its prompt built from ids: a render of the whole
    conversation) is worked on off the event loop: another rollout's call is answered while it
    is still being built."""
    tokenizer = HeldTokenizer(tiny_chat_model_folder)
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", tokenizer=tokenizer)
    large, other = proxy.open_session(), proxy.open_session()
    first = [{"role": "user", "content": "hello"}]
    assert post(proxy.url, "chat", large.key, {"messages": first}).status_code == 200
    turns = [*first, large.calls[0].reply, {"role": "user", "content": "y" * 300_000}]
    answers: list[httpx.Response] = []
    sender = threading.Thread(
        target=lambda: answers.append(post(proxy.url, "chat", large.key, {"messages": turns}))
    )
    sender.start()
    try:
        assert tokenizer.held.wait(60), "the large call's prompt was never built"
        answer = post(proxy.url, "chat", other.key)
        assert answer.status_code == 200
        assert len(other.calls) == 1 and len(large.calls) == 1  # the large one is still held
    finally:
        tokenizer.release.set()
        sender.join(60)
    assert answers[0].status_code == 200 and large.calls[1].stitched
