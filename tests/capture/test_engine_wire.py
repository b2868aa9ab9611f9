"""Each wire format, streamed and not, through the proxy to vLLM: the records hold the engine's
own ids and logprobs (the same request sent straight to the engine gets the same), the tool
call goes out and its result comes back in the harness's format, and the prompt the proxy
builds from ids for the next call is the one the engine itself renders from the text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.trajectories import CONVERSATIONS, TOOLS
from engine_support.vllm_engine import Engine
from scripted_harness import ScriptedHarness

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]

GREEDY = {"temperature": 0, "max_tokens": 40}


def straight(engine: Engine, messages: list[dict[str, Any]], seed: int) -> dict[str, Any]:
    """The chat completion of ``messages``, asked of the engine directly."""
    body = {"model": engine.model, "messages": messages, "tools": TOOLS, **GREEDY, "seed": seed}
    body.update(return_token_ids=True, logprobs=True)
    response = httpx.post(f"{engine.base_url}/chat/completions", json=body, timeout=120)
    response.raise_for_status()
    return response.json()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("wire", ["chat", "responses", "messages"])
def test_each_format_records_the_engines_own_ids_and_round_trips_a_tool_call(
    vllm: Engine, tiny_chat_model_folder: Path, proxies: Any, wire: str, stream: bool
) -> None:
    proxy = proxies(engine_url=vllm.base_url, model=vllm.model, tokenizer=tiny_chat_model_folder)
    session = proxy.open_session()
    harness = ScriptedHarness(proxy.url, session.key, wire, stream=stream, seed=7, sampling=GREEDY)
    harness.run(CONVERSATIONS[0][0]["content"], calls=2)
    first, second = session.calls

    direct = straight(vllm, [{"role": "user", "content": CONVERSATIONS[0][0]["content"]}], 700)
    choice = direct["choices"][0]
    assert first.prompt_ids == direct["prompt_token_ids"]
    assert first.sampled_ids == choice["token_ids"]
    assert first.logprobs == [e["logprob"] for e in choice["logprobs"]["content"]]
    [tool_call] = first.reply["tool_calls"]
    assert tool_call["function"]["name"] == "bash"
    assert (first.wire, first.streamed) == (wire, stream)

    conversation = session.conversation(1)
    assert [m["role"] for m in conversation] == ["user", "assistant", "tool"]
    assert conversation[2]["tool_call_id"] == tool_call["id"]
    rendered = httpx.post(
        f"{vllm.url}/tokenize",
        json={"model": vllm.model, "messages": conversation, "tools": TOOLS},
        timeout=60,
    ).json()["tokens"]
    assert second.stitched and second.prompt_ids == rendered
    assert (second.continues, second.parent) == (0, 0)
    direct = straight(vllm, conversation, 701)["choices"][0]
    assert second.sampled_ids == direct["token_ids"]
    assert second.reply["content"] == CONVERSATIONS[0][3]["content"] == direct["message"]["content"]
    assert session.report().ok and len(session.sequences()) == 1
