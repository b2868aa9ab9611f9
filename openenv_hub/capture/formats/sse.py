"""Server-sent events as the three wire formats stream them, and the pieces a text is replayed
in.

Layer: services.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = ["PIECE_CHARS", "data_event", "named_event", "pieces"]

#: The longest piece of text one stream event carries when an answer is replayed.
PIECE_CHARS = 32


def data_event(payload: dict[str, Any] | str) -> bytes:
    """``data: JSON`` and a blank line (chat completions; ``"[DONE]"`` passes as it is)."""
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n".encode()


def named_event(payload: dict[str, Any]) -> bytes:
    """``event: TYPE``, ``data: JSON`` and a blank line (Responses and Anthropic Messages, whose
    payloads carry their ``type``)."""
    text = json.dumps(payload, ensure_ascii=False)
    return f"event: {payload['type']}\ndata: {text}\n\n".encode()


def pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``size`` characters (none for an empty
    text)."""
    for start in range(0, len(text), size):
        yield text[start : start + size]
