"""The tiny chat model fine-tuned on the spot reproduces its conversations: with transformers
right after training, and through vLLM serving it (greedy decoding writes each trained
assistant turn, tool calls parsed into tool calls)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from engine_support import tiny_chat_model
from engine_support.fixtures import ENGINE_TIMEOUT_S
from engine_support.trajectories import CONVERSATIONS, TOOLS, call, tool, user
from engine_support.vllm_engine import Engine

pytestmark = [pytest.mark.slow, pytest.mark.timeout(ENGINE_TIMEOUT_S)]


def _wire(message: dict) -> dict:
    """A conversation message as a client sends it (tool-call arguments as JSON text, ids)."""
    if message["role"] == "tool":
        return {**message, "tool_call_id": "call_0"}
    if not message.get("tool_calls"):
        return message
    calls = []
    for number, one in enumerate(message["tool_calls"]):
        function = {**one["function"], "arguments": json.dumps(one["function"]["arguments"])}
        calls.append({"id": f"call_{number}", "type": "function", "function": function})
    return {**message, "tool_calls": calls}


def test_fine_tuning_reproduces_a_new_conversation_from_scratch(tmp_path: Path) -> None:
    conversation = [user("Make a folder named out."), call("mkdir out"), tool(""), user("ok")]
    conversation.append({"role": "assistant", "content": "The folder out is made."})
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"conversations": [conversation], "tools": TOOLS}))
    script = str(Path(tiny_chat_model.__file__))
    done = subprocess.run(
        [sys.executable, script, str(spec), str(tmp_path / "model")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["reproduced"] is True and result["steps"] <= 1200
    assert (tmp_path / "model" / "model.safetensors").is_file()


@pytest.mark.parametrize("number", range(len(CONVERSATIONS)))
def test_the_engine_serving_the_fine_tuned_model_writes_each_trained_turn(
    vllm: Engine, number: int
) -> None:
    conversation = CONVERSATIONS[number]
    for at, expected in enumerate(conversation):
        if expected["role"] != "assistant":
            continue
        body = {
            "model": vllm.model,
            "messages": [_wire(m) for m in conversation[:at]],
            "tools": TOOLS,
            "temperature": 0,
            "max_tokens": 64,
        }
        reply = httpx.post(f"{vllm.base_url}/chat/completions", json=body, timeout=60)
        reply.raise_for_status()
        choice = reply.json()["choices"][0]
        message = choice["message"]
        if expected.get("tool_calls"):
            assert choice["finish_reason"] == "tool_calls"
            names = [c["function"]["name"] for c in message["tool_calls"]]
            arguments = [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]]
            assert names == ["bash"]
            assert arguments == [expected["tool_calls"][0]["function"]["arguments"]]
        else:
            assert (choice["finish_reason"], message["content"]) == ("stop", expected["content"])
