"""The codes of the wire: error codes of ``/ws`` frames, JSON-RPC error codes, the WebSocket close
codes the server and the client act on, and how many requests may wait on one connection.

Layer: core.
"""

from __future__ import annotations

from enum import Enum

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "MAX_PIPELINED",
    "ErrorCode",
    "JsonRpcCode",
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
    """Error codes of JSON-RPC 2.0 replies on ``/mcp``."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_ERROR = -32000


#: The session ended: a ``close`` message, a refusal at connect, or the client went.
CLOSE_NORMAL = 1000
#: The server ended the session on its own (idle timeout, shutdown, a stuck step).
CLOSE_GOING_AWAY = 1001
#: The client sent what it may not: more requests at once than :data:`MAX_PIPELINED` allows.
CLOSE_POLICY_VIOLATION = 1008
#: A frame exceeded the size limit of the side that closed.
CLOSE_MESSAGE_TOO_BIG = 1009

#: Requests a client may send while an earlier one is still being answered (pipelining).
MAX_PIPELINED = 32
