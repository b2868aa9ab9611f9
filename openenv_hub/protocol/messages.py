"""Client to server on ``/ws``: the five messages, and decoding a text frame into one of them.

Dispatch is on ``type``; each message then validates strictly (no extra keys). A frame that is
not a valid message raises :class:`DecodeError`, which carries the error frame to answer with.

Layer: core.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic_core
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError

from openenv_hub.protocol.codes import ErrorCode
from openenv_hub.protocol.replies import error_frame
from openenv_hub.protocol.strict_json import may_not_be_finite, parse_json
from openenv_hub.protocol.validation import describe, public_errors

__all__ = [
    "CloseMessage",
    "DecodeError",
    "IncomingMessage",
    "McpMessage",
    "ResetMessage",
    "StateMessage",
    "StepMessage",
    "decode_message",
]

MESSAGE_CONFIG = ConfigDict(extra="forbid")


class ResetMessage(BaseModel):
    """``{"type": "reset", "data": {keyword arguments of reset}}``."""

    model_config = MESSAGE_CONFIG
    type: Literal["reset"]
    data: dict[str, Any] = Field(default_factory=dict)


class StepMessage(BaseModel):
    """``{"type": "step", "data": {the action's fields}}``."""

    model_config = MESSAGE_CONFIG
    type: Literal["step"]
    data: dict[str, Any]


class StateMessage(BaseModel):
    """``{"type": "state"}``."""

    model_config = MESSAGE_CONFIG
    type: Literal["state"]


class CloseMessage(BaseModel):
    """``{"type": "close"}``: the session ends; no reply."""

    model_config = MESSAGE_CONFIG
    type: Literal["close"]


class McpMessage(BaseModel):
    """``{"type": "mcp", "data": {a JSON-RPC request}}``."""

    model_config = MESSAGE_CONFIG
    type: Literal["mcp"]
    data: dict[str, Any]


def message_tag(value: Any) -> str | None:
    """The ``type`` of a message, if it is a string."""
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) else None


IncomingMessage = Annotated[
    Annotated[ResetMessage, Tag("reset")]
    | Annotated[StepMessage, Tag("step")]
    | Annotated[StateMessage, Tag("state")]
    | Annotated[CloseMessage, Tag("close")]
    | Annotated[McpMessage, Tag("mcp")],
    Discriminator(message_tag),
]
_INCOMING: TypeAdapter[Any] = TypeAdapter(IncomingMessage)


class DecodeError(Exception):
    """A frame that is not a valid message; ``frame`` is the error reply to send."""

    def __init__(self, frame: bytes) -> None:
        super().__init__(frame.decode())
        self.frame = frame


def decode_message(
    raw: str | bytes,
) -> ResetMessage | StepMessage | StateMessage | CloseMessage | McpMessage:
    """Parse and validate one text frame, or raise :class:`DecodeError` carrying the reply."""
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    if not may_not_be_finite(text):
        try:
            return _INCOMING.validate_json(raw)  # type: ignore[no-any-return]
        except ValidationError as exc:
            if exc.errors()[0]["type"] == "json_invalid":
                detail = exc.errors()[0].get("ctx", {}).get("error", "invalid JSON")
                frame = error_frame(ErrorCode.INVALID_JSON, f"Invalid JSON: {detail}")
                raise DecodeError(frame) from None
            raise DecodeError(_decode_error_frame(exc, pydantic_core.from_json(raw))) from None
    try:
        value = parse_json(raw)
    except ValueError as exc:
        raise DecodeError(error_frame(ErrorCode.INVALID_JSON, f"Invalid JSON: {exc}")) from None
    try:
        return _INCOMING.validate_python(value)  # type: ignore[no-any-return]
    except ValidationError as exc:
        raise DecodeError(_decode_error_frame(exc, value)) from None


def _decode_error_frame(exc: ValidationError, value: Any) -> bytes:
    first = exc.errors()[0]
    if first["type"] in ("union_tag_not_found", "union_tag_invalid", "model_attributes_type"):
        kind = message_tag(value) if first["type"] != "model_attributes_type" else None
        return error_frame(ErrorCode.UNKNOWN_TYPE, f"Unknown message type: {kind or ''}")
    errors = public_errors(exc, drop_prefix=1)
    return error_frame(ErrorCode.VALIDATION_ERROR, describe(errors, "message"), errors=errors)
