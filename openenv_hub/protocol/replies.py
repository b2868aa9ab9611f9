"""Server to client on ``/ws``: the frames that answer requests (made by the server, read by the
client with :func:`reply_data`), and the reply payload of a ``reset`` or ``step``, which HTTP
sends too.

Layer: core.
"""

from __future__ import annotations

from typing import Any

import pydantic_core

from openenv_hub.errors import ServerReplyError, error_from_wire
from openenv_hub.protocol.codes import ErrorCode
from openenv_hub.types import Observation

__all__ = [
    "error_frame",
    "error_frame_for",
    "mcp_frame",
    "observation_frame",
    "observation_payload",
    "reply_data",
    "state_frame",
]


def observation_payload(observation: Observation) -> dict[str, Any]:
    """``{"observation": {...}, "reward": r, "done": d}`` as both transports send it.

    ``metadata`` stays inside the observation, and is repeated at the top level when it is not
    empty (as OpenEnv 0.10 does; HTTP replies always carry the top-level key).
    """
    body = observation.model_dump(exclude={"reward", "done"})
    payload = {"observation": body, "reward": observation.reward, "done": observation.done}
    if observation.metadata:
        payload["metadata"] = body["metadata"]
    return payload


def _frame(kind: str, data: Any) -> bytes:
    return pydantic_core.to_json({"type": kind, "data": data}, fallback=str)


def _error_json(value: Any) -> bytes:
    """Error replies are always valid JSON, whatever the input they quote."""
    return pydantic_core.to_json(value, fallback=str, inf_nan_mode="strings")


def observation_frame(payload: dict[str, Any]) -> bytes:
    """The reply to a ``reset`` or ``step``: ``{"type": "observation", "data": payload}``."""
    return _frame("observation", payload)


def state_frame(state: dict[str, Any]) -> bytes:
    """The reply to a ``state`` request."""
    return _frame("state", state)


def mcp_frame(response: dict[str, Any]) -> bytes:
    """The reply to an ``mcp`` request: the JSON-RPC response inside ``data``."""
    return _frame("mcp", response)


def error_frame(code: ErrorCode, message: str, **extra: Any) -> bytes:
    """An ``{"type": "error"}`` frame with ``code``, ``message`` and any further data."""
    return _error_json({"type": "error", "data": {"message": message, "code": code.value, **extra}})


def error_frame_for(exc: ServerReplyError) -> bytes:
    """The ``{"type": "error"}`` frame of an exception, with the codes its class declares."""
    return _error_json({"type": "error", "data": {"message": exc.message, **exc.wire_data()}})


def reply_data(raw: str | bytes, expect: str) -> dict[str, Any]:
    """The ``data`` of a reply of type ``expect``, read by a client.

    Raises:
        ServerReplyError: the reply is an error frame (the class its code names, through
            :func:`~openenv_hub.errors.error_from_wire`), is not JSON, or is not an ``expect``
            frame with an object as its data.
    """
    try:
        frame = pydantic_core.from_json(raw)
    except ValueError as exc:
        raise ServerReplyError(f"Server sent a frame that is not JSON: {exc}") from None
    kind = frame.get("type") if isinstance(frame, dict) else None
    data = frame.get("data") if isinstance(frame, dict) else None
    if kind == "error":
        raise error_from_wire(data if isinstance(data, dict) else {})
    if kind != expect or not isinstance(data, dict):
        raise ServerReplyError(f"Expected a '{expect}' reply, got {str(raw)[:200]!r}")
    return data
