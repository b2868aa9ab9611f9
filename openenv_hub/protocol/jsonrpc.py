"""JSON-RPC 2.0 on ``/mcp``: the request envelope and the replies.

Layer: core.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from openenv_hub.errors import ServerReplyError
from openenv_hub.protocol.codes import JsonRpcCode

__all__ = ["JsonRpcRequest", "jsonrpc_error", "jsonrpc_error_for", "jsonrpc_result"]


class JsonRpcRequest(BaseModel):
    """A JSON-RPC 2.0 request (a notification when it has no ``id``)."""

    model_config = ConfigDict(extra="forbid")
    jsonrpc: Literal["2.0"]
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    id: str | int | None = None


def jsonrpc_result(request_id: str | int | None, result: Any) -> dict[str, Any]:
    """A successful reply."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def jsonrpc_error(
    request_id: str | int | None, code: JsonRpcCode | int, message: str, data: Any = None
) -> dict[str, Any]:
    """An error reply."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "error": {"code": int(code), "message": message, "data": data},
    }


def jsonrpc_error_for(request_id: str | int | None, exc: ServerReplyError) -> dict[str, Any]:
    """The JSON-RPC error reply of an exception, with the code its class declares."""
    data = {**exc.data, **({"reason": exc.reason} if exc.reason else {})}
    return jsonrpc_error(request_id, exc.jsonrpc_code, exc.message, data or None)
