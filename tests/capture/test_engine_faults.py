"""Faults the grades must catch against the real engine: a reply without ids (planted by a
relay between the proxy and vLLM that strips them) is fatal, and so are the prefix breaks the
engine makes when the proxy, given no tokenizer, lets it re-render every prompt from text."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.vllm_engine import Engine
from scripted_harness import ScriptedHarness
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from test_engine_rollouts import FIRST_LINES, PLAN, SAMPLING
from wire_bodies import body_for, post

from openenv_hub.capture.recorder import NO_TOKENIZER

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]


def stripping_relay(engine: Engine) -> Starlette:
    """Forwards chat completions to ``engine`` and drops the ids and logprobs of its answer."""

    async def relay(request: Request) -> JSONResponse:
        async with httpx.AsyncClient(timeout=120) as client:
            url = f"{engine.base_url}/chat/completions"
            answer = (await client.post(url, json=await request.json())).json()
        answer.pop("prompt_token_ids", None)
        for choice in answer["choices"]:
            choice.pop("token_ids", None)
            choice["logprobs"] = None
        return JSONResponse(answer)

    return Starlette(routes=[Route("/v1/chat/completions", relay, methods=["POST"])])


@pytest.mark.parametrize("wire", ["chat", "messages"])
def test_an_engine_reply_without_ids_is_graded_fatal(
    vllm: Engine, serve: Callable[..., Any], proxies: Any, wire: str
) -> None:
    relay = serve(stripping_relay(vllm))
    proxy = proxies(engine_url=f"{relay.url}/v1", model=vllm.model)
    session = proxy.open_session()
    response = post(proxy.url, wire, session.key, body_for(wire, "What is 2 + 3?", max_tokens=16))
    assert response.status_code == 200  # the harness still gets its answer
    report = session.report()
    assert not report.ok
    [fatal] = report.of("fatal")
    assert (fatal.code, fatal.call) == ("no_token_ids", 0)
    assert "no prompt ids and no sampled ids" in fatal.message
    assert session.sequences() == []


def test_without_a_tokenizer_the_engines_re_rendering_breaks_and_is_graded_fatal(
    vllm: Engine, proxies: Any
) -> None:
    proxy = proxies(engine_url=vllm.base_url, model=vllm.model)
    breaks = 0
    for number, (wire, stream) in enumerate(PLAN[:12]):
        session = proxy.open_session()
        harness = ScriptedHarness(
            proxy.url, session.key, wire, stream=stream, seed=number, sampling=SAMPLING
        )
        harness.run(FIRST_LINES[number % len(FIRST_LINES)], 4)
        calls, report = session.calls, session.report()
        assert not any(c.stitched for c in calls)
        fatal = report.of("fatal")
        assert {f.code for f in fatal} <= {"prefix_break"}
        for finding in fatal:
            call = calls[finding.call]
            assert call.continues is not None and call.parent != call.continues
            assert call.link_note == NO_TOKENIZER
        assert len(session.sequences()) == 1 + len(fatal)
        breaks += len(fatal)
    assert breaks >= 1
