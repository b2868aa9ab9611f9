"""HTTP routes: ``/health``, ``/metadata``, ``/schema``, ``/reset``, ``/step``, ``/state``, ``/mcp``.

``/reset``, ``/step`` and ``/state`` are stateless as in OpenEnv (a fresh environment per
request) unless the request names a session in the ``X-OpenEnv-Session`` header, in which case
they drive that session (created with the ``openenv/session/create`` JSON-RPC method). A
stateless request holds a session slot like any session (503 CAPACITY_REACHED when none is
free), and is cancelled if its client disconnects before the answer.

Layer: server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

import pydantic_core
from fastapi import APIRouter, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError

from openenv_hub.protocol import ResetRequest, StepRequest, describe_validation_error
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool
from openenv_hub.server.stateless import stateless_call

__all__ = ["SESSION_HEADER", "build_router"]

T = TypeVar("T")

SESSION_HEADER = "X-OpenEnv-Session"
SessionHeader = Annotated[str | None, Header(alias=SESSION_HEADER)]


class StepResponse(BaseModel):
    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


def build_router(
    pool: SessionPool,
    *,
    observation_cls: type[BaseModel],
    state_cls: type[BaseModel],
    reset_observation_cls: type[BaseModel] | None = None,
    simulation: bool = True,
) -> APIRouter:
    """The HTTP routes. ``simulation=False`` (production mode) leaves out reset/step/state."""
    router = APIRouter()
    schemas = {
        "action": pool.action_cls.model_json_schema(),
        "observation": observation_cls.model_json_schema(),
        "state": state_cls.model_json_schema(),
        "reset_observation": (reset_observation_cls or observation_cls).model_json_schema(),
    }

    @router.get("/health", tags=["Health"])
    async def health() -> dict[str, Any]:
        # Threads given up after the hard time limit are reported (only once there are any).
        if pool.abandoned_threads:
            return {"status": "healthy", "abandoned_threads": pool.abandoned_threads}
        return {"status": "healthy"}

    @router.get("/metadata", tags=["Environment Info"])
    async def metadata() -> dict[str, Any]:
        return (await pool.metadata()).model_dump()

    @router.get("/schema", tags=["Schema"])
    async def schema() -> dict[str, Any]:
        return schemas

    @router.post("/mcp", tags=["MCP"])
    async def mcp(request: Request) -> Response:
        body = await request.body()
        client = request.client.host if request.client else None
        reply = await _unless_disconnected(request, handle_jsonrpc(pool, body, client=client))
        if reply is None:  # a notification
            return Response(status_code=202)
        return JSONResponse(reply)

    if simulation:
        _episode_routes(router, pool)
    return router


@asynccontextmanager
async def _session_for(pool: SessionPool, session_id: str | None) -> AsyncIterator[Session]:
    """The named session, or a temporary one for a stateless request."""
    if session_id:
        yield pool.get(session_id)
    else:
        async with pool.ephemeral() as session:
            yield session


async def _unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """Await ``work``, but cancel it if the client disconnects first (its session, if any, is
    then closed and its slot freed once the environment's thread lets go). The work runs in the
    request's own task; one task watches the client."""
    handler = asyncio.current_task()
    assert handler is not None
    finished = False

    def client_left(watch: asyncio.Future[None]) -> None:
        if not finished and not watch.cancelled():
            handler.cancel()

    gone = asyncio.ensure_future(_disconnected(request))
    gone.add_done_callback(client_left)
    try:
        return await work
    finally:
        finished = True
        gone.cancel()


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _stateless(
    request: Request,
    pool: SessionPool,
    session_id: str | None,
    call: Callable[[Session], Awaitable[T]],
) -> T:
    """Run ``call`` on the named session, or on a temporary one watched for the client's exit."""

    async def work() -> T:
        async with _session_for(pool, session_id) as session:
            return await call(session)

    if session_id:
        return await work()
    return await _unless_disconnected(request, work())


def _episode_routes(router: APIRouter, pool: SessionPool) -> None:
    # The bodies are read and the replies written here rather than by FastAPI's parameters
    # and response_model (the same validation, the same errors, documented in the OpenAPI
    # schema alike): FastAPI's own handling of them cost more than the rest of a stateless
    # call (benchmarks/README.md, "The stateless HTTP call in one hop").
    @router.post(
        "/reset", tags=["Environment Control"], response_model=StepResponse,
        openapi_extra=_documented(ResetRequest, required=False),
    )  # fmt: skip
    async def reset(http: Request) -> Response:
        request = await _body(http, ResetRequest)
        params = request.model_dump(exclude_unset=True) if request is not None else {}
        if session_id := http.headers.get(SESSION_HEADER):
            return _reply(await pool.reset(pool.get(session_id), params))
        return _reply(await _unless_disconnected(http, stateless_call(pool, "reset", params)))

    @router.post(
        "/step", tags=["Environment Control"], response_model=StepResponse,
        openapi_extra=_documented(StepRequest, required=True),
    )  # fmt: skip
    async def step(http: Request) -> Response:
        request = await _body(http, StepRequest)
        if request is None:
            raise RequestValidationError([_MISSING_BODY])
        try:
            action = pool.parse_action(request.action)
        except ValidationError as exc:
            _, errors = describe_validation_error(exc, "action")
            raise HTTPException(status_code=422, detail=errors) from None
        params = request.model_dump(exclude_unset=True, exclude={"action"})
        if session_id := http.headers.get(SESSION_HEADER):
            return _reply(await pool.step(pool.get(session_id), action, params))
        call = stateless_call(pool, "step", params, action)
        return _reply(await _unless_disconnected(http, call))

    @router.get("/state", tags=["State Management"])
    async def state(http: Request, session_id: SessionHeader = None) -> dict[str, Any]:
        return await _stateless(http, pool, session_id, pool.state)


_MISSING_BODY = {"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}
_JSON_TYPES = ("application/json",)

M = TypeVar("M", bound=BaseModel)


async def _body(http: Request, model: type[M]) -> M | None:
    """The request's body as ``model`` (None when there is none), as FastAPI validates a body
    parameter: JSON when the content type says so, errors located under ``body``."""
    raw = await http.body()
    if not raw:
        return None
    kind = http.headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if kind in _JSON_TYPES or (kind.startswith("application/") and kind.endswith("+json")):
            return model.model_validate_json(raw)
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        raise RequestValidationError(
            [{**error, "loc": ("body", *error["loc"])} for error in errors]
        ) from None


def _reply(payload: dict[str, Any]) -> Response:
    """A reset's or step's payload in the shape of :class:`StepResponse`."""
    body = {
        "observation": payload["observation"],
        "reward": payload.get("reward"),
        "done": payload.get("done", False),
        "metadata": payload.get("metadata"),
    }
    return Response(pydantic_core.to_json(body), media_type="application/json")


def _documented(model: type[BaseModel], *, required: bool) -> dict[str, Any]:
    """The OpenAPI description of a body read by :func:`_body` and of the session header."""
    return {
        "parameters": [
            {"name": SESSION_HEADER, "in": "header", "required": False,
             "schema": {"type": "string", "title": "X-Openenv-Session"}},
        ],
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        },
    }  # fmt: skip
