"""What each WebSocket message is answered with: ``/ws`` frames (step, reset, state, mcp,
close) and ``/mcp`` JSON-RPC messages, as reply frames; errors worded as the protocol says.
:mod:`openenv_hub.server.websocket` decides when.

Layer: server.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

import pydantic_core
from pydantic import ValidationError

from openenv_hub.errors import EnvironmentExecutionError, ServerReplyError
from openenv_hub.protocol import (
    CloseMessage,
    DecodeError,
    McpMessage,
    ResetMessage,
    ResetRequest,
    StateMessage,
    decode_message,
    error_frame_for,
    jsonrpc_error_for,
    mcp_frame,
    observation_frame,
    state_frame,
    validation_error,
)
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["CLOSE", "Handler", "answer_mcp_frame", "answer_ws_frame", "mcp_refusal"]

logger = logging.getLogger("openenv_hub.server")

CLOSE: Final = b"close"  # what a handler returns for a close message (no reply)
Handler = Callable[[SessionPool, Session, str], Awaitable[bytes | None]]


async def answer_ws_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    """The reply to a ``/ws`` message (``CLOSE`` for a close; ``None``: none), errors as
    error frames."""
    action = pool.actions.read_step_frame(text)  # a well-formed step frame, read in one pass
    kind = "step"
    try:
        if action is None:
            message = decode_message(text)
            kind = message.type
            if message.type != "step":
                return await _answer_other(pool, session, message)
            try:
                action = pool.parse_action(message.data)
            except ValidationError as exc:
                raise validation_error(exc, f"action for {pool.action_cls.__name__}") from None
        return observation_frame(await pool.step(session, action))
    except DecodeError as exc:
        return exc.frame
    except ServerReplyError as exc:
        return error_frame_for(exc)
    except Exception as exc:  # a defect of the server: answer, log, and keep the socket
        logger.exception("Session %s: unexpected failure answering %s", session.id, kind)
        return error_frame_for(EnvironmentExecutionError(f"Internal server error: {exc!r}"))


async def _answer_other(
    pool: SessionPool,
    session: Session,
    message: ResetMessage | StateMessage | CloseMessage | McpMessage,
) -> bytes | None:
    """The reply to a ``reset``, ``state``, ``mcp`` or ``close`` message (``CLOSE`` for the
    last); errors are the caller's to word."""
    if message.type == "reset":
        try:
            params = ResetRequest.model_validate(message.data).model_dump(exclude_unset=True)
        except ValidationError as exc:
            raise validation_error(exc, "reset arguments") from None
        return observation_frame(await pool.reset(session, params))
    if message.type == "state":
        return state_frame(await pool.state(session))
    if message.type == "mcp":
        response = await handle_jsonrpc(pool, message.data, bound=session)
        return None if response is None else mcp_frame(response)
    return CLOSE


async def answer_mcp_frame(pool: SessionPool, session: Session, text: str) -> bytes | None:
    """The reply to a JSON-RPC message on ``/mcp`` (``None`` for a notification)."""
    response = await handle_jsonrpc(pool, text, bound=session)
    return None if response is None else pydantic_core.to_json(response, fallback=str)


def mcp_refusal(exc: ServerReplyError) -> bytes:
    """A JSON-RPC error for a socket refused before it began (``/mcp``)."""
    return pydantic_core.to_json(jsonrpc_error_for(None, exc))
