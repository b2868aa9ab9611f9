"""The proxy's HTTP side: the routes a harness calls, each bounded and authenticated.

``POST /v1/chat/completions``, ``/v1/responses`` and ``/v1/messages`` (also without ``/v1``)
take a model call in their wire format; ``GET /v1/models`` lists the model the harness may
name; ``GET``/``HEAD /`` and ``/health`` answer 200 (harnesses probe them). Every route but
those probes needs a session key, as ``Authorization: Bearer KEY`` or ``x-api-key: KEY``: an
unknown key gets 401 in the wire format's error shape. No route lists sessions or reads
records.

Bounds: a body larger than ``max_body_bytes`` gets 413 before it is read whole; a body not
received within ``body_timeout_s`` gets 408; a session past its call limit gets 429; an
engine that does not answer within its timeout gets 504. (The number of connections served at
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
    """

    max_body_bytes: int = 32 * 1024 * 1024
    body_timeout_s: float = 60.0


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


async def _read_body(request: Request, limits: ProxyLimits) -> dict[str, Any]:
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
    try:
        body = json.loads(b"".join(chunks) or b"null")
    except (ValueError, UnicodeDecodeError):
        raise _Refused(400, "the request body is not JSON") from None
    if not isinstance(body, dict):
        raise _Refused(400, "the request body must be a JSON object")
    return body


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
            call = translator.parse(await _read_body(request, limits))
        except _Refused as refusal:
            return refuse(refusal.status, str(refusal))
        except TranslationError as error:
            return refuse(400, str(error))
        return await _run(translator, session, recorder, call, refuse)

    return handle


async def _run(
    translator: WireTranslator,
    session: CaptureSession,
    recorder: Recorder,
    call: ChatCall,
    refuse: Callable[[int, str], Response],
) -> Response:
    index = session.next_index()
    if index is None:
        return refuse(429, f"this session has recorded its limit of {session.max_calls} calls")
    try:
        reply = await recorder.run(session, index, call, translator.name)
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
