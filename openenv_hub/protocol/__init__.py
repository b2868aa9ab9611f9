"""OpenEnv's wire, without I/O: what the server and the client both build on.

``docs/protocol.md`` describes the protocol in prose. The modules, by concern:

```
codes         ErrorCode, JsonRpcCode, the close codes, MAX_PIPELINED
strict_json   parse_json: JSON as the wire allows it (no NaN, no overflow)
messages      client -> server on /ws: ResetMessage ... McpMessage, decode_message, DecodeError
actions       ActionReader: actions off the wire, a step frame and its action in one pass
replies       server -> client on /ws: observation_payload, observation_frame, ..., reply_data
connection    each end's rules: ServerConnection (order, pipelining), ClientConnection (one
              request at a time, lost episodes), request_frame
urls          where a server's wire is: ws_url, http_url, is_loopback, web_ui_path_hint
validation    pydantic's errors as the wire carries them
bodies        HTTP bodies: ResetRequest, StepRequest, CallToolResult
jsonrpc       JSON-RPC on /mcp: JsonRpcRequest, jsonrpc_result, jsonrpc_error, jsonrpc_error_for
```

Names are loaded on first use, so a client that needs only the codes or the replies does not
build the server's message validators.

Layer: core.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    # codes
    "CLOSE_GOING_AWAY": "codes",
    "CLOSE_MESSAGE_TOO_BIG": "codes",
    "CLOSE_NORMAL": "codes",
    "CLOSE_POLICY_VIOLATION": "codes",
    "MAX_PIPELINED": "codes",
    "ErrorCode": "codes",
    "JsonRpcCode": "codes",
    # JSON
    "parse_json": "strict_json",
    # client -> server
    "CloseMessage": "messages",
    "DecodeError": "messages",
    "IncomingMessage": "messages",
    "McpMessage": "messages",
    "ResetMessage": "messages",
    "StateMessage": "messages",
    "StepMessage": "messages",
    "decode_message": "messages",
    "ActionReader": "actions",
    "step_frame_reader": "actions",
    # server -> client
    "error_frame": "replies",
    "error_frame_for": "replies",
    "mcp_frame": "replies",
    "observation_frame": "replies",
    "observation_payload": "replies",
    "state_frame": "replies",
    "reply_data": "replies",
    # each end of a connection
    "ClientConnection": "connection",
    "PipeliningRefused": "connection",
    "ServerConnection": "connection",
    "request_frame": "connection",
    # URLs
    "http_url": "urls",
    "is_loopback": "urls",
    "web_ui_path_hint": "urls",
    "ws_url": "urls",
    # validation errors
    "describe_validation_error": "validation",
    "validation_error": "validation",
    # HTTP
    "CallToolResult": "bodies",
    "ResetRequest": "bodies",
    "StepRequest": "bodies",
    # JSON-RPC
    "JsonRpcRequest": "jsonrpc",
    "jsonrpc_error": "jsonrpc",
    "jsonrpc_error_for": "jsonrpc",
    "jsonrpc_result": "jsonrpc",
}

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_MESSAGE_TOO_BIG",
    "CLOSE_NORMAL",
    "CLOSE_POLICY_VIOLATION",
    "MAX_PIPELINED",
    "ActionReader",
    "CallToolResult",
    "ClientConnection",
    "CloseMessage",
    "DecodeError",
    "ErrorCode",
    "IncomingMessage",
    "JsonRpcCode",
    "JsonRpcRequest",
    "McpMessage",
    "PipeliningRefused",
    "ResetMessage",
    "ResetRequest",
    "ServerConnection",
    "StateMessage",
    "StepMessage",
    "StepRequest",
    "decode_message",
    "describe_validation_error",
    "error_frame",
    "error_frame_for",
    "http_url",
    "is_loopback",
    "jsonrpc_error",
    "jsonrpc_error_for",
    "jsonrpc_result",
    "mcp_frame",
    "observation_frame",
    "observation_payload",
    "parse_json",
    "reply_data",
    "request_frame",
    "state_frame",
    "step_frame_reader",
    "validation_error",
    "web_ui_path_hint",
    "ws_url",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'openenv_hub.protocol' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:
    from openenv_hub.protocol.actions import ActionReader, step_frame_reader
    from openenv_hub.protocol.bodies import CallToolResult, ResetRequest, StepRequest
    from openenv_hub.protocol.codes import (
        CLOSE_GOING_AWAY,
        CLOSE_MESSAGE_TOO_BIG,
        CLOSE_NORMAL,
        CLOSE_POLICY_VIOLATION,
        MAX_PIPELINED,
        ErrorCode,
        JsonRpcCode,
    )
    from openenv_hub.protocol.connection import (
        ClientConnection,
        PipeliningRefused,
        ServerConnection,
        request_frame,
    )
    from openenv_hub.protocol.jsonrpc import (
        JsonRpcRequest,
        jsonrpc_error,
        jsonrpc_error_for,
        jsonrpc_result,
    )
    from openenv_hub.protocol.messages import (
        CloseMessage,
        DecodeError,
        IncomingMessage,
        McpMessage,
        ResetMessage,
        StateMessage,
        StepMessage,
        decode_message,
    )
    from openenv_hub.protocol.replies import (
        error_frame,
        error_frame_for,
        mcp_frame,
        observation_frame,
        observation_payload,
        reply_data,
        state_frame,
    )
    from openenv_hub.protocol.strict_json import parse_json
    from openenv_hub.protocol.urls import http_url, is_loopback, web_ui_path_hint, ws_url
    from openenv_hub.protocol.validation import describe_validation_error, validation_error
