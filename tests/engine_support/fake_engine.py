"""A trivial model engine: ``POST /v1/chat/completions`` answers at once with fixed token ids,
as vLLM shapes a chat completion asked for ids and logprobs. For tests of the proxy's own
behaviour (bounds, keys, errors) and for measuring the proxy's own cost in benchmarks, where a
real engine's time would drown it.

Its prompt ids are the request's prompt as ids when it carries them
(``kv_transfer_params.prompt_token_ids``), else the bytes of a plain rendering of the messages;
it samples ``SAMPLED`` (the last one the end-of-turn id). What it last received is kept in
``app.state.requests`` (body and headers), and switches on ``app.state`` change its answers:
``strip_ids`` (no ids, no logprobs: a planted fault), ``status`` (an error status, its
message ``error_message`` when set),
``delay_s`` (a slow engine), ``tool_call`` (answer with a call of that tool).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

SAMPLED = [72, 105, 33, 2]  # "Hi!" then the end-of-turn id
CONTENT = "Hi!"


def rendered_ids(messages: list[dict[str, Any]]) -> list[int]:
    """The fake's prompt: the bytes of ``<role>content`` for each message, and ``<assistant>``."""
    text = "".join(f"<{m.get('role')}>{m.get('content') or ''}" for m in messages) + "<assistant>"
    return list(text.encode())


def _answer(body: dict[str, Any], state: Any) -> dict[str, Any]:
    given = (body.get("kv_transfer_params") or {}).get("prompt_token_ids")
    prompt = list(given) if given else rendered_ids(body.get("messages") or [])
    message: dict[str, Any] = {"role": "assistant", "content": CONTENT}
    finish = "stop"
    if getattr(state, "tool_call", None):
        arguments = json.dumps({"command": "ls"})
        call = {"id": "call_fake_0", "type": "function"}
        call["function"] = {"name": state.tool_call, "arguments": arguments}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    entries = [
        {"token": f"token_id:{i}", "logprob": -0.25, "bytes": [], "top_logprobs": []}
        for i in SAMPLED
    ]
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    choice["stop_reason"] = None
    answer: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model"),
        "choices": [choice],
    }
    if not getattr(state, "strip_ids", False):
        choice["logprobs"] = {"content": entries}
        choice["token_ids"] = list(SAMPLED)
        answer["prompt_token_ids"] = prompt
    return answer


async def chat_completions(request: Request) -> Response:
    body = await request.json()
    state = request.app.state
    state.requests.append({"body": body, "headers": dict(request.headers)})
    del state.requests[:-50]  # the last few are enough for any test
    if getattr(state, "delay_s", 0):
        await asyncio.sleep(state.delay_s)
    if getattr(state, "status", None):
        said = getattr(state, "error_message", None) or "the fake engine was told to fail"
        error = {"message": said, "code": state.status}
        return JSONResponse({"error": error}, status_code=state.status)
    return JSONResponse(_answer(body, state))


def create_fake_engine() -> Starlette:
    app = Starlette(routes=[Route("/v1/chat/completions", chat_completions, methods=["POST"])])
    app.state.requests = []
    return app
