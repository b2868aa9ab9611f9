"""``POST /reset`` and ``POST /step``: what they answer, and an ASGI dispatcher that answers
them before FastAPI's router.

:func:`answer` reads a body, calls the session core and encodes the reply; FastAPI's routes
(:mod:`openenv_hub.server.http`, which also describe both in the OpenAPI schema) and
:class:`EpisodeDispatch` both call it, so they answer alike: the same validation, the same 422s
located under ``body``, errors rendered by the app's exception handlers.

:class:`EpisodeDispatch` is the innermost middleware: the host and origin checks, the body bound
and the JSON check have run before it, as before any route. Routing a request through every
route of the app, resolving its (empty) dependencies and the exception middleware cost about as
much as the rest of a stateless call (``benchmarks/README.md``, "The stateless HTTP call without the
router"); a request it does not take (another path or method, a ``root_path``, a request
FastAPI's telemetry observes) goes on to the router.

Layer: server.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Iterable
from typing import Any, TypeVar

import pydantic_core
from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from openenv_hub.protocol import ResetRequest, StepRequest, describe_validation_error
from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.stateless import stateless_call

__all__ = ["SESSION_HEADER", "WATCH_AFTER_S", "EpisodeDispatch", "answer", "unless_disconnected"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

SESSION_HEADER = "X-OpenEnv-Session"
WATCH_AFTER_S = 0.05
"""How long a stateless call runs before a task starts watching for its client leaving: most
calls answer sooner, and then cost no task (a client that leaves is noticed this much later)."""

_SESSION_KEY = SESSION_HEADER.lower().encode()
_MISSING_BODY = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
_JSON_TYPES = ("application/json",)
_PATHS = {"/reset": "reset", "/step": "step"}


async def answer(
    pool: SessionPool,
    method: str,
    raw: bytes,
    headers: Iterable[tuple[bytes, bytes]],
    receive: Receive,
) -> bytes:
    """The JSON reply of ``POST /reset`` or ``/step`` (``method``) with body ``raw``.

    A request that names a session in ``X-OpenEnv-Session`` drives it; any other is stateless,
    cancelled if its client leaves (watched on ``receive``). Raises what the routes raised:
    :class:`RequestValidationError`, :class:`HTTPException` (an action that does not validate),
    the server's reply errors."""
    kind = _header(headers, b"content-type")
    session_id = _header(headers, _SESSION_KEY)
    if method == "reset":
        reset = _body(raw, kind, ResetRequest)
        params = reset.model_dump(exclude_unset=True) if reset is not None else {}
        if session_id:
            return _reply(await pool.reset(pool.get(session_id), params))
        return _reply(await unless_disconnected(receive, stateless_call(pool, "reset", params)))
    step = _body(raw, kind, StepRequest)
    if step is None:
        raise RequestValidationError([_MISSING_BODY])
    try:
        action = pool.parse_action(step.action)
    except ValidationError as exc:
        _, errors = describe_validation_error(exc, "action")
        raise HTTPException(status_code=422, detail=errors) from None
    params = step.model_dump(exclude_unset=True, exclude={"action"})
    if session_id:
        return _reply(await pool.step(pool.get(session_id), action, params))
    return _reply(await unless_disconnected(receive, stateless_call(pool, "step", params, action)))


async def unless_disconnected(receive: Receive, work: Awaitable[T]) -> T:
    """Await ``work``, but cancel it if the client disconnects first (its session, if any, is
    then closed and its slot freed once the environment's thread lets go). The work runs in the
    request's own task; once it has run :data:`WATCH_AFTER_S`, one task watches the client."""
    handler = asyncio.current_task()
    assert handler is not None
    loop = asyncio.get_running_loop()
    watching: list[asyncio.Task[None]] = []

    def client_left(watch: asyncio.Future[None]) -> None:
        if watching and not watch.cancelled():
            handler.cancel()

    def watch() -> None:
        task = loop.create_task(_disconnected(receive))
        task.add_done_callback(client_left)
        watching.append(task)

    later = loop.call_later(WATCH_AFTER_S, watch)
    try:
        return await work
    finally:
        later.cancel()
        if watching:
            watching.pop().cancel()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str:
    """The first value of header ``name`` (lower case, as ASGI gives names), or ``""``."""
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return ""


def _body(raw: bytes, content_type: str, model: type[M]) -> M | None:
    """``raw`` as ``model`` (None when empty), as FastAPI validates a body parameter: JSON when
    the content type says so, errors located under ``body``."""
    if not raw:
        return None
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind in _JSON_TYPES or (kind.startswith("application/") and kind.endswith("+json")):
            return model.model_validate_json(raw)
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in errors]
        ) from None


def _reply(payload: dict[str, Any]) -> bytes:
    """A reset's or step's payload in the shape of ``StepResponse``, as JSON."""
    body = {
        "observation": payload["observation"],
        "reward": payload.get("reward"),
        "done": payload.get("done", False),
        "metadata": payload.get("metadata"),
    }
    return pydantic_core.to_json(body)


class EpisodeDispatch:
    """ASGI middleware: ``POST /reset`` and ``/step`` answered by :func:`answer`, everything
    else passed on to ``app``."""

    def __init__(self, app: ASGIApp, *, pool: SessionPool) -> None:
        self.app = app
        self.pool = pool

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = _PATHS.get(scope["path"]) if scope["type"] == "http" else None
        if method is None or scope["method"] != "POST" or _routed(scope):
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        try:
            body = await answer(self.pool, method, raw, scope["headers"], receive)
        except Exception as exc:
            await _handled(exc, scope, receive, send)
            return
        length = b"%d" % len(body)
        headers = [(b"content-length", length), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _routed(scope: Scope) -> bool:
    """Whether the request goes to the router after all: under a ``root_path`` (whose paths the
    router resolves), or observed by FastAPI's telemetry (which names its spans by route)."""
    return bool(scope.get("root_path")) or scope.get("fastapi.telemetry") is not None


async def _handled(exc: Exception, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``exc`` with the app's handler for it, as Starlette's exception middleware does
    (by status code for an HTTPException, else by class); re-raised when there is none."""
    handlers: dict[Any, Any] = scope["app"].exception_handlers
    status = exc.status_code if isinstance(exc, StarletteHTTPException) else None
    handler = handlers.get(status) if status is not None else None
    for cls in type(exc).__mro__:
        if handler is not None:
            break
        handler = handlers.get(cls)
    if handler is None:
        raise exc
    request = Request(scope, receive)
    if inspect.iscoroutinefunction(handler):
        response = await handler(request, exc)
    else:
        response = await run_in_threadpool(handler, request, exc)
    if response is not None:
        await response(scope, receive, send)
    exc.__traceback__ = None
