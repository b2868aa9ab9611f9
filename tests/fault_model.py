"""A model server that fails on a schedule: an OpenAI-compatible ``/v1/chat/completions`` on
127.0.0.1 whose answers are scripted (the word game's guesses, in an order fixed by the
request's seed, so a run's results depend on its seeds alone) and whose Nth request may be
answered with a fault instead.

Faults, by the number of the chat request (from 1; the preflight is request 1):

- ``500``: status 500 with a JSON error body;
- ``429``: status 429 with ``Retry-After: 1``;
- ``stall``: no answer for 60 s (a client's timeout ends it);
- ``empty``: status 200 with ``choices: []``;
- ``not_json``: status 200, ``content-type: application/json``, a body that is an HTML page;
- ``exit``: the process ends at once, mid-request (what a killed server does);
- ``hold``: the right answer, 1.5 s late (a rollout is surely mid-episode meanwhile);
- ``trickle``: status 200, then a space every 0.5 s for 60 s (each read is quick, the answer
  never ends: what a stuck proxy's keep-alive whitespace looks like).

``--from N KIND`` answers KIND to every request from the Nth on. Run it with
``python tests/fault_model.py --port PORT --faults '{"3": "500", "4": "500"}'``; ``GET
/requests`` says how many chat requests it had, and what the last one set besides its messages
and tools. A request with ``"greedy": true`` is answered as if its seed were 0 (as a server that
ignores the temperature answers every sample alike).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

WORDS = ["crane", "slate", "pious", "mango", "fjord", "glyph", "brick", "stove", "plumb", "dwarf"]


def scripted_reply(body: dict[str, Any]) -> dict[str, Any]:
    """A completion guessing the word of the turn, or "OK" when there is no tool to call."""
    turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
    if not body.get("tools"):
        message: dict[str, Any] = {"role": "assistant", "content": "OK"}
        reason = "stop"
    else:
        seed = 0 if body.get("greedy") else body.get("seed", 0)
        word = random.Random(seed).sample(WORDS, 6)[min(turn, 5)]
        call = {"name": "guess", "arguments": json.dumps({"word": word})}
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"call_{turn}", "type": "function", "function": call}],
        }
        reason = "tool_calls"
    prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "scripted"),
        "choices": [{"index": 0, "message": message, "finish_reason": reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7},
    }


async def _trickle() -> Any:
    for _ in range(120):
        yield b" "
        await asyncio.sleep(0.5)


def create_app(faults: dict[int, str], from_on: tuple[int, str] | None = None) -> FastAPI:
    app = FastAPI()
    count: dict[str, Any] = {"chat": 0, "last": {}}

    @app.get("/requests")
    async def requests() -> dict[str, Any]:
        return count

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Any:
        count["chat"] += 1
        number = count["chat"]
        fault = faults.get(number)
        if from_on is not None and number >= from_on[0]:
            fault = from_on[1]
        body = await request.json()
        count["last"] = {k: v for k, v in body.items() if k not in ("messages", "tools")}
        if fault == "500":
            return JSONResponse({"error": {"message": "internal failure"}}, status_code=500)
        if fault == "429":
            error = {"error": {"message": "rate limited"}}
            return JSONResponse(error, status_code=429, headers={"retry-after": "1"})
        if fault == "stall":
            await asyncio.sleep(60)
        if fault == "hold":
            await asyncio.sleep(1.5)
        if fault == "empty":
            return JSONResponse({**scripted_reply(body), "choices": []})
        if fault == "not_json":
            page = b"<html><body>502 Bad Gateway</body></html>"
            return Response(page, media_type="application/json")
        if fault == "exit":
            os._exit(1)
        if fault == "trickle":
            return StreamingResponse(_trickle(), media_type="application/json")
        return JSONResponse(scripted_reply(body))

    return app


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--faults", default="{}", help="JSON: request number -> fault")
    parser.add_argument("--from", dest="from_on", nargs=2, metavar=("N", "KIND"))
    args = parser.parse_args(argv)
    faults = {int(k): v for k, v in json.loads(args.faults).items()}
    from_on = (int(args.from_on[0]), args.from_on[1]) if args.from_on else None
    app = create_app(faults, from_on)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    sys.exit(main())
