"""OpenEnv's wire messages: WebSocket frames, HTTP bodies, JSON-RPC envelopes and error codes.

Pure data and pure functions, no I/O: the server and the client both build on this module.
``docs/protocol.md`` describes the protocol in prose.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from enum import Enum
from typing import Annotated, Any, Generic, Literal, TypeVar

import pydantic_core
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter, ValidationError

from openenv_hub.errors import ActionValidationError, ServerReplyError
from openenv_hub.types import Observation

__all__ = [
    "CallToolResult",
    "ErrorCode",
    "IncomingMessage",
    "JsonRpcCode",
    "JsonRpcRequest",
    "ResetRequest",
    "StepRequest",
    "decode_message",
    "error_frame",
    "error_frame_for",
    "jsonrpc_error",
    "jsonrpc_error_for",
    "jsonrpc_result",
    "observation_frame",
    "observation_payload",
    "parse_json",
    "state_frame",
    "step_frame_reader",
    "validation_error",
]


class ErrorCode(str, Enum):
    """Codes of ``{"type": "error"}`` frames on ``/ws``."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"


class JsonRpcCode(int, Enum):
    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_ERROR = -32000


# -- client -> server on /ws -------------------------------------------------------------------

_MESSAGE = ConfigDict(extra="forbid")


class ResetMessage(BaseModel):
    model_config = _MESSAGE
    type: Literal["reset"]
    data: dict[str, Any] = Field(default_factory=dict)


class StepMessage(BaseModel):
    model_config = _MESSAGE
    type: Literal["step"]
    data: dict[str, Any]


_ActionT = TypeVar("_ActionT", bound=BaseModel)


class _StepFrame(BaseModel, Generic[_ActionT]):
    """A step message whose data is already the action (see :func:`step_frame_reader`)."""

    model_config = _MESSAGE
    type: Literal["step"]
    data: _ActionT


class StateMessage(BaseModel):
    model_config = _MESSAGE
    type: Literal["state"]


class CloseMessage(BaseModel):
    model_config = _MESSAGE
    type: Literal["close"]


class McpMessage(BaseModel):
    model_config = _MESSAGE
    type: Literal["mcp"]
    data: dict[str, Any]


def _message_tag(value: Any) -> str | None:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if isinstance(kind, str) else None


IncomingMessage = Annotated[
    Annotated[ResetMessage, Tag("reset")]
    | Annotated[StepMessage, Tag("step")]
    | Annotated[StateMessage, Tag("state")]
    | Annotated[CloseMessage, Tag("close")]
    | Annotated[McpMessage, Tag("mcp")],
    Discriminator(_message_tag),
]
_INCOMING: TypeAdapter[Any] = TypeAdapter(IncomingMessage)


class DecodeError(Exception):
    """A frame that is not a valid message; ``frame`` is the error reply to send."""

    def __init__(self, frame: bytes) -> None:
        super().__init__(frame.decode())
        self.frame = frame


def parse_json(raw: str | bytes) -> Any:
    """Parse JSON as the wire allows it: no ``NaN``/``Infinity``, no number that overflows to
    infinity, no unpaired UTF-16 surrogate escape. Raises ValueError saying what is wrong."""
    value = pydantic_core.from_json(raw, allow_inf_nan=False)
    if not _finite(value):
        raise ValueError("a number is too large to be represented (it overflows to infinity)")
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


#: A number with an exponent of three digits or more, or of 309 digits: it may overflow.
_BIG_EXPONENT = re.compile(r"[0-9][eE]\+?[0-9]{3}")
_LONG_NUMBER = re.compile(r"[0-9]{309}")


def _maybe_not_finite(text: str) -> bool:
    """Whether ``text`` may hold a number JSON cannot carry (``NaN``, ``Infinity``, or one that
    overflows). Frames without one take the one-pass path; the rare ones with it (in a string,
    say) are parsed strictly and checked number by number."""
    return (
        "NaN" in text
        or "Infinity" in text
        or _BIG_EXPONENT.search(text) is not None
        or (len(text) >= 309 and _LONG_NUMBER.search(text) is not None)
    )


def decode_message(
    raw: str | bytes,
) -> ResetMessage | StepMessage | StateMessage | CloseMessage | McpMessage:
    """Parse and validate one text frame, or raise :class:`DecodeError` carrying the reply."""
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    if not _maybe_not_finite(text):
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


def step_frame_reader(action_cls: type[BaseModel]) -> Callable[[str], Any]:
    """A reader of ``step`` frames for ``action_cls`` that validates the frame and its action in
    one pass. It returns the action, or ``None`` for any other text, and for a step frame it
    cannot take: the caller then decodes the text as usual, which also words any error."""
    frame: TypeAdapter[_StepFrame[Any]] = TypeAdapter(_StepFrame[action_cls])  # type: ignore[valid-type]

    def read(text: str) -> Any:
        if '"step"' not in text or _maybe_not_finite(text):
            return None
        try:
            return frame.validate_json(text).data
        except ValidationError:
            return None

    return read


def _decode_error_frame(exc: ValidationError, value: Any) -> bytes:
    first = exc.errors()[0]
    if first["type"] in ("union_tag_not_found", "union_tag_invalid", "model_attributes_type"):
        kind = _message_tag(value) if first["type"] != "model_attributes_type" else None
        return error_frame(ErrorCode.UNKNOWN_TYPE, f"Unknown message type: {kind or ''}")
    errors = _public_errors(exc, drop_prefix=1)
    return error_frame(ErrorCode.VALIDATION_ERROR, _describe(errors, "message"), errors=errors)


def _public_errors(exc: ValidationError, *, drop_prefix: int = 0) -> list[dict[str, Any]]:
    """Pydantic's errors as JSON-safe dicts, ``loc`` trimmed of ``drop_prefix`` leading items."""
    out = []
    for err in exc.errors():
        item: dict[str, Any] = {
            "type": err["type"],
            "loc": list(err["loc"][drop_prefix:]),
            "msg": err["msg"],
            "input": err.get("input"),
        }
        if "ctx" in err:
            item["ctx"] = {
                k: v if isinstance(v, (int, float, str, bool)) else str(v)
                for k, v in err["ctx"].items()
            }
        if "url" in err:
            item["url"] = err["url"]
        out.append(item)
    return pydantic_core.to_jsonable_python(out, fallback=str)  # type: ignore[no-any-return]


def _describe(errors: list[dict[str, Any]], what: str) -> str:
    parts = [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in errors[:5]]
    more = f" (+{len(errors) - 5} more)" if len(errors) > 5 else ""
    return f"Invalid {what}: " + "; ".join(parts) + more


def validation_error(exc: ValidationError, what: str) -> ActionValidationError:
    """The VALIDATION_ERROR for an action (or other payload) that failed validation."""
    errors = _public_errors(exc)
    return ActionValidationError(_describe(errors, what), data={"errors": errors})


def validation_error_frame(exc: ValidationError, what: str) -> bytes:
    """The VALIDATION_ERROR frame for an action (or other payload) that failed validation."""
    return error_frame_for(validation_error(exc, what))


def describe_validation_error(exc: ValidationError, what: str) -> tuple[str, list[dict[str, Any]]]:
    errors = _public_errors(exc)
    return _describe(errors, what), errors


# -- server -> client on /ws -------------------------------------------------------------------


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
    return _frame("observation", payload)


def state_frame(state: dict[str, Any]) -> bytes:
    return _frame("state", state)


def mcp_frame(response: dict[str, Any]) -> bytes:
    return _frame("mcp", response)


def error_frame(code: ErrorCode, message: str, **extra: Any) -> bytes:
    return _error_json({"type": "error", "data": {"message": message, "code": code.value, **extra}})


def error_frame_for(exc: ServerReplyError) -> bytes:
    """The ``{"type": "error"}`` frame of an exception, with the codes its class declares."""
    return _error_json({"type": "error", "data": {"message": exc.message, **exc.wire_data()}})


# -- HTTP bodies -------------------------------------------------------------------------------


class ResetRequest(BaseModel):
    """Body of ``POST /reset``; unknown keys are forwarded to ``reset`` if it accepts them."""

    model_config = ConfigDict(extra="allow")
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)


class StepRequest(BaseModel):
    """Body of ``POST /step``: the action's fields under ``action``."""

    model_config = ConfigDict(extra="allow")
    action: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0)
    request_id: str | None = Field(default=None, max_length=255)


class CallToolResult(BaseModel):
    """Shape of a successful MCP tool call result as OpenEnv sends it."""

    model_config = ConfigDict(extra="allow")
    content: list[dict[str, Any]] = Field(default_factory=list)
    structured_content: Any = None
    meta: Any = None
    data: Any = None
    is_error: bool = False


# -- JSON-RPC (/mcp) ---------------------------------------------------------------------------


class JsonRpcRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    id: str | int | None = None


def jsonrpc_result(request_id: str | int | None, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def jsonrpc_error(
    request_id: str | int | None, code: JsonRpcCode | int, message: str, data: Any = None
) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": int(code), "message": message, "data": data},
    }


def jsonrpc_error_for(request_id: str | int | None, exc: ServerReplyError) -> dict[str, Any]:
    """The JSON-RPC error reply of an exception, with the code its class declares."""
    data = {**exc.data, **({"reason": exc.reason} if exc.reason else {})}
    return jsonrpc_error(request_id, exc.jsonrpc_code, exc.message, data or None)
