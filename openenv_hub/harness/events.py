"""What a harness does in a turn, as OpenEnv's RFC 005 names it: :class:`HarnessEvent` of a
:class:`HarnessEventType`, a turn's :class:`HarnessResponse`, and the :class:`HarnessConfig` an
adapter is made from.

Payloads by type (``HarnessEvent.data``):

- ``llm_request``: ``{"call": N, "wire": ..., "model": ..., "messages": [...new messages],
  "prompt_tokens": N}``
- ``llm_response``: ``{"call": N, "content": ..., "tool_calls": [...], "finish_reason": ...,
  "sampled_tokens": N, "error": ...}``
- ``llm_chunk``: ``{"content": ..., "index": N}`` (not emitted here: the engine answers the
  proxy whole, and a harness that streams gets that answer replayed)
- ``tool_call``: ``{"call": N, "tool_name": ..., "arguments": ...}`` (the model asked for it)
- ``tool_result``: ``{"call": N, "tool_name": ..., "result": ...}`` (the harness sent it back)
- ``text_output``: ``{"stream": "stdout" | "stderr", "text": ...}``
- ``error``: ``{"message": ..., "recoverable": bool}`` (a refused network name is one, with
  ``"refused": NAME``)
- ``turn_complete``: ``{"response": ..., "exit_code": N}``

Layer: client.
"""

from __future__ import annotations

import time
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    "HarnessConfig",
    "HarnessEvent",
    "HarnessEventType",
    "HarnessResponse",
    "HarnessTransport",
]


class HarnessEventType(str, Enum):
    """Types of events emitted during a harness turn."""

    LLM_REQUEST = "llm_request"
    LLM_RESPONSE = "llm_response"
    LLM_CHUNK = "llm_chunk"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    TEXT_OUTPUT = "text_output"
    ERROR = "error"
    TURN_COMPLETE = "turn_complete"


class HarnessEvent(BaseModel):
    """A single event from a harness turn."""

    type: HarnessEventType
    timestamp: float = Field(default_factory=time.time)
    data: dict[str, Any] = Field(default_factory=dict)


class HarnessResponse(BaseModel):
    """Complete response from a single conversational turn.

    Attributes:
        response: The harness's text answer (its final message).
        events: All events of the turn, in order.
        done: True when the harness considers the task finished (a one-shot harness always
            does after its run).
    """

    response: str = ""
    events: list[HarnessEvent] = Field(default_factory=list)
    done: bool = False


class HarnessTransport(str, Enum):
    """How the harness is driven. Every harness here is a command run to its end per turn
    (``stdio``); the others are RFC 005's names for harnesses served over HTTP or MCP."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "http"
    MCP = "mcp"


class HarnessConfig(BaseModel):
    """Configuration of an external harness (RFC 005's fields; those a sandboxed CLI harness
    has no use for are kept for the name's sake and say so).

    Attributes:
        name: The harness, e.g. ``"mini-swe-agent"``, ``"claude-code"``, ``"codex"``.
        command: The command that runs it (the adapter's default when empty).
        working_directory: Where it works, inside its sandbox.
        env_vars: More variables for the harness (nothing secret: the session's key is
            given by the environment).
        transport: How it is driven (``stdio``: a command per turn).
        mcp_config_path: Where the adapter writes the harness's MCP settings (None: the
            harness's own place in its home).
        startup_timeout_s: Time for its sandbox to start.
        session_timeout_s: Wall time of one turn (the harness is killed after it).
        model: The model name the harness asks for (the engine's is the proxy's).
        api_key_env_var: The variable the session's key is given in (None: the harness's own).
        max_turns: The most model calls in one turn where the harness can bound them.
        max_output_tokens: The most tokens one answer may have where the harness can bound
            them.
    """

    name: str
    command: list[str] = Field(default_factory=list)
    working_directory: str = "/workspace"
    env_vars: dict[str, str] = Field(default_factory=dict)
    transport: HarnessTransport = HarnessTransport.STDIO
    mcp_config_path: str | None = None
    startup_timeout_s: float = 60.0
    session_timeout_s: float = 600.0
    model: str | None = None
    api_key_env_var: str | None = None
    max_turns: int = 20
    max_output_tokens: int = 256
