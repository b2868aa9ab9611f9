"""What never crosses the proxy: the engine's URL and key never reach a harness, a session key
never reaches the engine, a log, a repr or a record; and how engine failures reach the
harness."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from serving import free_port
from wire_bodies import ENGINE_KEY, PATHS, body_for, post

from openenv_hub.capture import CaptureProxy, write_capture
from openenv_hub.errors import ConfigurationError

WIRES = list(PATHS)


def _leaks(text: str, engine_url: str) -> list[str]:
    port = engine_url.rsplit(":", 1)[-1].split("/")[0]
    return [secret for secret in (engine_url, ENGINE_KEY, f":{port}") if secret in text]


@pytest.mark.parametrize("wire", WIRES)
def test_engine_failures_reach_the_harness_without_the_engines_url_or_key(
    fake_engine: Any, proxies: Any, wire: str
) -> None:
    engine_url = f"{fake_engine.url}/v1"
    proxy = proxies(
        engine_url=engine_url, model="fake", engine_api_key=ENGINE_KEY, engine_timeout_s=0.5
    )
    session = proxy.open_session()
    state = fake_engine.app.state
    answers = []
    for status, expected in ((500, 502), (400, 400)):
        state.status = status
        answers.append((post(proxy.url, wire, session.key), expected))
    state.status, state.delay_s = None, 2.0
    answers.append((post(proxy.url, wire, session.key), 504))
    gone = f"http://127.0.0.1:{free_port()}/v1"
    down = proxies(engine_url=gone, model="fake", engine_api_key=ENGINE_KEY)
    answers.append((post(down.url, wire, down.open_session().key), 502))
    for response, expected in answers:
        assert response.status_code == expected, response.text
        assert _leaks(response.text + str(response.headers), engine_url) == []
        assert _leaks(response.text, gone) == []
    assert "the model engine failed (status 500)" in answers[0][0].text
    assert "refused the request: the fake engine was told to fail" in answers[1][0].text
    assert "did not answer within 0.5 s" in answers[2][0].text
    assert "could not be reached" in answers[3][0].text
    report = session.report()
    assert report.codes("warn") == ["call_failed"]  # the engine's 400
    assert report.codes("fatal") == ["engine_failed"] * 2 and not report.ok  # its 500, timeout


def test_an_engine_refusal_that_names_its_url_or_key_reaches_the_harness_without_them(
    fake_engine: Any, proxies: Any
) -> None:
    """An engine's 4xx text is passed to the harness; an engine (or a gateway in front of it)
    that quotes its own URL, address or key there must not hand them to the sandbox."""
    engine_url = f"{fake_engine.url}/v1"
    proxy = proxies(engine_url=engine_url, model="fake", engine_api_key=ENGINE_KEY)
    state = fake_engine.app.state
    state.status = 400
    state.error_message = (
        f"POST {engine_url}/chat/completions with 'Bearer {ENGINE_KEY}' refused; the upstream "
        f"http://gateway:hunter2@10.0.0.5/v1 said no; try {fake_engine.url.split('//')[1]}"
    )
    answer = post(proxy.url, "chat", proxy.open_session().key)
    assert answer.status_code == 400
    assert _leaks(answer.text, engine_url) == [] and "hunter2" not in answer.text
    assert "with 'Bearer ***' refused" in answer.json()["error"]["message"]


def test_the_engine_gets_its_own_key_and_never_the_harnesss(
    fake_engine: Any, fake_proxy: CaptureProxy
) -> None:
    session = fake_proxy.open_session()
    for wire in WIRES:
        assert post(fake_proxy.url, wire, session.key).status_code == 200
    for request in fake_engine.app.state.requests:
        assert request["headers"]["authorization"] == f"Bearer {ENGINE_KEY}"
        assert "x-api-key" not in request["headers"]
        assert session.key not in json.dumps(request)


def test_the_session_key_is_never_logged_shown_or_recorded(
    fake_engine: Any, fake_proxy: CaptureProxy, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    session = fake_proxy.open_session()
    for wire in WIRES:
        post(fake_proxy.url, wire, session.key, body_for(wire, stream=True))
    fake_engine.app.state.status = 500  # a failed call is logged, with the session's display id
    post(fake_proxy.url, "chat", session.key)
    post(fake_proxy.url, "chat", session.key[:-1] + "x")  # a near miss is refused, not echoed
    assert "rollout-" in caplog.text and "failed" in caplog.text
    written = write_capture(tmp_path / "calls.jsonl", {session.display_id: session.calls})
    shown = [caplog.text, repr(session), repr(fake_proxy), json.dumps(session.as_dict())]
    shown.append(written.read_text())
    for text in shown:
        assert session.key not in text
        assert session.key[4:20] not in text  # nor a piece of it


def test_an_engine_url_that_is_not_http_is_refused_without_its_credentials() -> None:
    with pytest.raises(ConfigurationError, match="must be an http") as refused:
        CaptureProxy(engine_url="ftp://alice:s3cret@127.0.0.1:8000/v1", model="tiny")
    assert "s3cret" not in str(refused.value) and "***@127.0.0.1:8000" in str(refused.value)
