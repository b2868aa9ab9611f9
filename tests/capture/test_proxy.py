"""The capture proxy in front of a fake engine: what it records, whom it answers, and its
bounds. (tests/capture/test_engine_*.py drive it against vLLM.)"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest
from engine_support.fake_engine import CONTENT, SAMPLED, rendered_ids
from wire_bodies import body_for, post, sse_events

from openenv_hub.capture import CaptureProxy

WIRES = ["chat", "responses", "messages"]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", WIRES)
def test_each_format_is_answered_and_its_call_recorded_with_the_engines_ids(
    fake_proxy: CaptureProxy, wire: str, stream: bool
) -> None:
    session = fake_proxy.open_session()
    response = post(fake_proxy.url, wire, session.key, body_for(wire, "hello", stream=stream))
    assert response.status_code == 200, response.text
    text = response.text if stream else json.dumps(response.json())
    assert CONTENT in text
    if stream:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert sse_events(response.text)
    [call] = session.calls
    assert (call.wire, call.streamed, call.index) == (wire, stream, 0)
    assert call.prompt_ids == rendered_ids([{"role": "user", "content": "hello"}])
    assert (call.sampled_ids, call.logprobs) == (SAMPLED, [-0.25] * len(SAMPLED))
    assert call.reply == {"role": "assistant", "content": CONTENT}
    assert session.report().ok


@pytest.mark.parametrize("wire", WIRES)
def test_a_key_that_is_no_open_sessions_is_refused_in_the_formats_own_shape(
    fake_proxy: CaptureProxy, fake_engine: Any, wire: str
) -> None:
    session = fake_proxy.open_session()
    fake_proxy.close_session(session)
    for key in (None, "cap-not-a-session", session.key):
        response = post(fake_proxy.url, wire, key)
        assert response.status_code == 401
        body = response.json()
        if wire == "messages":
            assert (body["type"], body["error"]["type"]) == ("error", "authentication_error")
        else:
            assert body["error"]["type"] == "authentication_error"
        assert "unknown API key" in response.text
    assert fake_engine.app.state.requests == [] and session.calls == []


def test_the_key_is_read_from_authorization_or_x_api_key(fake_proxy: CaptureProxy) -> None:
    session = fake_proxy.open_session()
    by_header = {"x-api-key": session.key, "anthropic-version": "2023-06-01"}
    response = httpx.post(
        fake_proxy.url + "/v1/messages", json=body_for("messages"), headers=by_header, timeout=30
    )
    assert response.status_code == 200, response.text
    assert post(fake_proxy.url, "chat", session.key).status_code == 200
    assert [c.wire for c in session.calls] == ["messages", "chat"]


def test_a_session_holds_only_its_own_calls_and_no_route_reads_any(
    fake_proxy: CaptureProxy,
) -> None:
    first, second = fake_proxy.open_session(), fake_proxy.open_session()
    assert post(fake_proxy.url, "chat", first.key).status_code == 200
    assert post(fake_proxy.url, "responses", second.key).status_code == 200
    assert [c.wire for c in first.calls] == ["chat"]
    assert [c.wire for c in second.calls] == ["responses"]
    headers = {"Authorization": f"Bearer {first.key}"}
    for path in (
        "/sessions",
        "/v1/sessions",
        f"/sessions/{second.display_id}",
        "/records",
        "/capture",
    ):
        for method in ("GET", "POST"):
            response = httpx.request(method, fake_proxy.url + path, headers=headers, timeout=10)
            assert response.status_code in (404, 405)
            assert second.key not in response.text and second.display_id not in response.text


def test_request_bodies_are_bounded(fake_engine: Any, proxies: Any) -> None:
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", max_body_mb=0.01)
    key = proxy.open_session().key
    big = body_for("chat", "x" * 20_000)
    assert post(proxy.url, "chat", key, big).status_code == 413

    def chunks() -> Any:  # no Content-Length: the proxy counts what arrives
        yield json.dumps(big).encode()

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    url = proxy.url + "/v1/chat/completions"
    chunked = httpx.post(url, content=chunks(), headers=headers, timeout=30)
    assert chunked.status_code == 413
    assert httpx.post(url, content=b"{not json", headers=headers, timeout=30).status_code == 400
    listed = httpx.post(url, content=b"[1, 2]", headers=headers, timeout=30)
    assert (listed.status_code, listed.json()["error"]["message"]) == (
        400,
        "the request body must be a JSON object",
    )
    assert fake_engine.app.state.requests == []


def test_a_body_that_does_not_arrive_in_time_gets_408(fake_engine: Any, proxies: Any) -> None:
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", body_timeout_s=0.5)
    key = proxy.open_session().key
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        head = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
            'Content-Length: 500\r\n\r\n{"model": '
        )
        sock.sendall(head.encode())
        started = time.monotonic()
        answer = sock.recv(65536).decode()
    assert answer.startswith("HTTP/1.1 408"), answer[:200]
    assert time.monotonic() - started < 5


def test_connections_beyond_the_limit_get_503(fake_engine: Any, proxies: Any) -> None:
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", max_connections=2)
    key = proxy.open_session().key
    held = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10) for _ in range(2)]
    try:
        for sock in held:  # two harnesses that never finish their headers
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        time.sleep(0.3)
        assert post(proxy.url, "chat", key).status_code == 503
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.3)
    assert post(proxy.url, "chat", key).status_code == 200


def test_a_session_past_its_call_limit_gets_429(fake_engine: Any, proxies: Any) -> None:
    proxy = proxies(engine_url=f"{fake_engine.url}/v1", model="fake", max_calls_per_session=2)
    key = proxy.open_session().key
    statuses = [post(proxy.url, "chat", key).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]


def test_n_above_one_is_refused_with_a_reason(fake_proxy: CaptureProxy) -> None:
    session = fake_proxy.open_session()
    response = post(fake_proxy.url, "chat", session.key, body_for("chat", n=2))
    assert response.status_code == 400
    assert "'n' must be 1" in response.json()["error"]["message"]


def test_probes_answer_without_a_key_and_models_needs_one(fake_proxy: CaptureProxy) -> None:
    assert httpx.head(fake_proxy.url + "/", timeout=10).status_code == 200
    assert httpx.get(fake_proxy.url + "/health", timeout=10).status_code == 200
    assert httpx.get(fake_proxy.base_url + "/models", timeout=10).status_code == 401
    key = fake_proxy.open_session().key
    models = httpx.get(
        fake_proxy.base_url + "/models", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert [m["id"] for m in models.json()["data"]] == ["fake"]


def test_the_proxy_listens_on_loopback_only(fake_proxy: CaptureProxy) -> None:
    assert fake_proxy.url.startswith("http://127.0.0.1:")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))  # picks the outward interface; sends nothing
        outward = probe.getsockname()[0]
    if outward.startswith("127."):
        pytest.skip("this machine has no address but loopback to try")
    with pytest.raises(OSError), socket.create_connection((outward, fake_proxy.port), timeout=5):
        pass


def test_trainer_sampling_and_the_token_cap_are_sent_and_recorded(
    fake_engine: Any, proxies: Any
) -> None:
    proxy = proxies(
        engine_url=f"{fake_engine.url}/v1",
        model="fake",
        sampling={"temperature": 1.0, "top_p": 1.0},
        max_tokens_cap=8,
    )
    session = proxy.open_session()
    asked = body_for("chat", top_p=0.5, max_tokens=100, seed=3)
    assert post(proxy.url, "chat", session.key, asked).status_code == 200
    sent = fake_engine.app.state.requests[-1]["body"]
    assert (sent["top_p"], sent["max_tokens"], sent["temperature"], sent["seed"]) == (
        1.0,
        8,
        1.0,
        3,
    )
    assert session.calls[0].sampling == {
        "top_p": 1.0,
        "max_tokens": 8,
        "temperature": 1.0,
        "seed": 3,
    }
    assert sent["model"] == "fake" and sent["return_token_ids"] is True and sent["logprobs"] is True


def test_a_continuation_is_recognised_and_a_rewritten_history_is_named(
    fake_proxy: CaptureProxy,
) -> None:
    session = fake_proxy.open_session()
    hello = {"role": "user", "content": "hello"}
    answer = {"role": "assistant", "content": f"  {CONTENT}\n"}  # whitespace aside, the answer
    turns = [
        [hello],
        [hello, answer, {"role": "user", "content": "more"}],
        [hello, {"role": "assistant", "content": "Bye."}, {"role": "user", "content": "more"}],
        [{"role": "user", "content": "another task"}],
    ]
    for messages in turns:
        assert post(fake_proxy.url, "chat", session.key, {"messages": messages}).status_code == 200
    calls = session.calls
    assert [c.continues for c in calls] == [None, 0, None, None]
    assert [c.history_length for c in calls] == [0, 2, 0, 0]
    assert session.conversation(1) == [hello, calls[0].reply, {"role": "user", "content": "more"}]
    notes = [c.link_note for c in calls]
    assert notes[0] == "it is the rollout's first call"
    assert "no tokenizer" in notes[1]  # no tokenizer: the fake engine rendered it from text
    assert notes[2] == (
        "the harness's messages differ from call 1's conversation at message 1 (a rewritten history)"
    )
    assert notes[3] == "its first message differs from call 2's (another conversation)"
    assert session.report().codes("fatal") == ["prefix_break"]  # call 1: its ids broke
