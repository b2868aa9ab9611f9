"""The proxy's HTTP side: the routes a harness calls, each bounded and authenticated.

``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` (also without ``/v1``)
take a model call in their wire format; ``GET /v1/models`` lists the model the harness may
name; ``GET``/``HEAD /`` and ``/health`` answer 200 (harnesses probe them). Every route but
those probes needs a session key, as ``Authorization: Bearer KEY`` or ``x-api-key: KEY``: an
unknown key gets 401 in the wire format's error shape. No route lists sessions or reads
records.

Bounds: a body larger than ``max_body_bytes`` gets 413 before it is read whole; a body not
received within ``body_timeout_s`` gets 408; a call of more than ``max_messages`` messages
(content blocks counted) or ``max_text_chars`` characters of text gets 413; a session past its
call limit gets 429; an engine that does not answer within its timeout gets 504. A body larger
than ``inline_bytes`` is read, translated and turned into the engine's prompt in a worker
thread, so one rollout's large call never holds the event loop the others' calls run on.
A request that is not what its wire format allows gets 400, and anything else that fails
gets 500, each in the wire format's error shape (never a traceback; the log has it). (The number of connections served at
once is the server's bound: :class:`CaptureProxy` ``max_connections``, 503 beyond.)

Layer: services.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from openenv_hub.capture.chat_form import ChatCall, TranslationError
from openenv_hub.capture.engine import EngineError
from openenv_hub.capture.formats import TRANSLATORS, WireTranslator
from openenv_hub.capture.recorder import Recorder
from openenv_hub.capture.sessions import CaptureSession, SessionRegistry

__all__ = ["ProxyLimits", "create_proxy_app"]

logger = logging.getLogger("openenv_hub.capture")


@dataclass(frozen=True)
class ProxyLimits:
    """The bounds of every request.

    Attributes:
        max_body_bytes: The largest request body.
        body_timeout_s: How long a request body may take to arrive.
        max_messages: The most messages one call may hold, content blocks and input items
            counted (``CaptureProxy(max_messages_per_call=...)``).
        max_text_chars: The most characters of text (every string of the body) one call may
            hold (``CaptureProxy(max_text_mb=...)``).
        inline_bytes: Bodies up to this size are handled on the event loop (a worker thread's
            hop costs more than their work); larger ones in a worker thread.
    """

    max_body_bytes: int = 32 * 1024 * 1024
    body_timeout_s: float = 60.0
    max_messages: int = 10_000
    max_text_chars: int = 8 * 1024 * 1024
    inline_bytes: int = 256 * 1024


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def session_key(request: Request) -> str | None:
    """The key a harness sent: ``Authorization: Bearer KEY`` or ``x-api-key: KEY``."""
    authorization = request.headers.get("authorization", "")
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.headers.get("x-api-key") or None


async def _read_body(request: Request, limits: ProxyLimits) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limits.max_body_bytes:
        raise _Refused(413, f"the request body is larger than {limits.max_body_bytes} bytes")
    chunks, size = [], 0

    async def receive() -> None:
        nonlocal size
        async for chunk in request.stream():
            size += len(chunk)
            if size > limits.max_body_bytes:
                raise _Refused(
                    413, f"the request body is larger than {limits.max_body_bytes} bytes"
                )
            chunks.append(chunk)

    try:
        await asyncio.wait_for(receive(), limits.body_timeout_s)
    except asyncio.TimeoutError:
        raise _Refused(
            408, f"the request body did not arrive within {limits.body_timeout_s:g} s"
        ) from None
    except ClientDisconnect:
        raise _Refused(400, "the client went away before sending its request") from None
    return b"".join(chunks)


def _parse_call(translator: WireTranslator, raw: bytes, limits: ProxyLimits) -> ChatCall:
    """The call a body holds, within ``limits`` (:class:`_Refused` or
    :class:`TranslationError` when it is not one)."""
    try:
        body = json.loads(raw or b"null")
    except RecursionError:
        raise _Refused(400, "the request body nests JSON deeper than the proxy reads") from None
    except (ValueError, UnicodeDecodeError):
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the request body must be a JSON object")
    _check_size(body, len(raw), limits)
    return translator.parse(body)


def _check_size(body: dict[str, Any], size: int, limits: ProxyLimits) -> None:
    """:class:`_Refused` (413) for a call of more messages or text than ``limits`` allow."""
    messages = 0
    for name in ("messages", "input"):
        given = body.get(name)
        if isinstance(given, list):
            messages += len(given)
            if messages <= limits.max_messages:
                messages += sum(len(m["content"]) for m in given if _has_parts(m))
    if messages > limits.max_messages:
        raise _Refused(
            413,
            f"the call holds more than {limits.max_messages} messages and content blocks "
            "(the proxy's bound: CaptureProxy(max_messages_per_call=...))",
        )
    if size > limits.max_text_chars and _text_chars(body) > limits.max_text_chars:
        raise _Refused(
            413,
            f"the call holds more than {limits.max_text_chars} characters of text (the "
            "proxy's bound: CaptureProxy(max_text_mb=...))",
        )


def _has_parts(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("content"), list)


def _text_chars(value: Any) -> int:
    """How many characters the strings of a parsed JSON value hold (keys included)."""
    total, pending = 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            total += sum(len(key) for key in item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return total


def _call_route(
    translator: WireTranslator, registry: SessionRegistry, recorder: Recorder, limits: ProxyLimits
) -> Callable[[Request], Any]:
    def refuse(status: int, message: str) -> Response:
        return JSONResponse(translator.error(status, message), status_code=status)

    async def handle(request: Request) -> Response:
        session = registry.find(session_key(request))
        if session is None:
            return refuse(401, "unknown API key: use the key of an open capture session")
        try:
            raw = await _read_body(request, limits)
            off_loop = len(raw) > limits.inline_bytes
            if off_loop:
                call = await asyncio.to_thread(_parse_call, translator, raw, limits)
            else:
                call = _parse_call(translator, raw, limits)
            return await _run(translator, session, recorder, call, refuse, off_loop)
        except _Refused as refusal:
            return refuse(refusal.status, str(refusal))
        except TranslationError as error:
            return refuse(400, str(error))
        except Exception:  # a defect of the proxy: the harness gets its error shape, the log more
            logger.exception(
                "%s: a %s request failed in the proxy", session.display_id, translator.name
            )
            return refuse(500, "the capture proxy failed on this request (its log says why)")

    return handle


async def _run(
    translator: WireTranslator,
    session: CaptureSession,
    recorder: Recorder,
    call: ChatCall,
    refuse: Callable[[int, str], Response],
    off_loop: bool,
) -> Response:
    index = session.next_index()
    if index is None:
        return refuse(429, f"this session has recorded its limit of {session.max_calls} calls")
    try:
        reply = await recorder.run(session, index, call, translator.name, off_loop=off_loop)
    except EngineError as error:
        return refuse(error.status, str(error))
    if call.stream:
        events = list(translator.stream(call, reply))

        async def replay() -> AsyncIterator[bytes]:
            for event in events:
                yield event

        headers = {"Cache-Control": "no-cache"}
        return StreamingResponse(replay(), media_type="text/event-stream", headers=headers)
    return JSONResponse(translator.answer(call, reply))


def create_proxy_app(
    registry: SessionRegistry,
    recorder: Recorder,
    *,
    model_name: str,
    limits: ProxyLimits | None = None,
) -> Starlette:
    """The proxy's ASGI app over ``registry`` and ``recorder``. ``model_name`` is what
    ``/v1/models`` lists."""
    limits = limits or ProxyLimits()
    routes = []
    paths = {"chat": "/chat/completions", "responses": "/responses", "messages": "/messages"}
    for wire, path in paths.items():
        handle = _call_route(TRANSLATORS[wire], registry, recorder, limits)
        routes += [
            Route(f"/v1{path}", handle, methods=["POST"]),
            Route(path, handle, methods=["POST"]),
        ]

    async def models(request: Request) -> Response:
        if registry.find(session_key(request)) is None:
            refusal = TRANSLATORS["chat"].error(401, "unknown API key")
            return JSONResponse(refusal, status_code=401)
        listed = {"id": model_name, "object": "model", "owned_by": "openenv-hub"}
        return JSONResponse({"object": "list", "data": [listed]})

    async def alive(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    routes += [
        Route("/v1/models", models, methods=["GET"]),
        Route("/models", models, methods=["GET"]),
        Route("/", alive, methods=["GET", "HEAD"]),
        Route("/health", alive, methods=["GET", "HEAD"]),
    ]
    return Starlette(routes=routes)
