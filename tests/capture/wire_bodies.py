"""Smallest requests of each wire format, and posting them to a proxy with a key."""

from __future__ import annotations

import json
from typing import Any

import httpx

#: The engine's own key in the tests (it must never reach a harness).
ENGINE_KEY = "engine-secret-key-0123456789"
PATHS = {"chat": "/v1/chat/completions", "responses": "/v1/responses", "messages": "/v1/messages"}


def body_for(wire: str, text: str = "hi", *, stream: bool = False, **extra: Any) -> dict[str, Any]:
    """A one-message request of ``wire``."""
    if wire == "chat":
        body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    elif wire == "responses":
        body = {"model": "m", "input": text}
    else:
        body = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": text}]}
    return {**body, "stream": stream, **extra}


def post(
    url: str, wire: str, key: str | None, body: dict[str, Any] | None = None, **options: Any
) -> httpx.Response:
    """POST ``body`` (default: :func:`body_for`) to the proxy at ``url`` with ``key`` as a
    bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    payload = body if body is not None else body_for(wire)
    return httpx.post(url + PATHS[wire], json=payload, headers=headers, timeout=30, **options)


def sse_events(text: str) -> list[dict[str, Any]]:
    """The JSON payloads of a server-sent event stream (``[DONE]`` left out)."""
    events = []
    for block in text.split("\n\n"):
        for line in block.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line.removeprefix("data: ")))
    return events
