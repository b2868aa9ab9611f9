"""HTTP routes: ``/health``, ``/metadata``, ``/schema``, ``/reset``, ``/step``, ``/state``, ``/mcp``.

``/reset``, ``/step`` and ``/state`` are stateless as in OpenEnv (a fresh environment per
request) unless the request names a session in the ``X-OpenEnv-Session`` header, in which case
they drive that session (created with the ``openenv/session/create`` JSON-RPC method). A
stateless request holds a session slot like any session (503 CAPACITY_REACHED when none is
free), and is cancelled if its client disconnects before the answer.

Layer: server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from openenv_hub.protocol import ResetRequest, StepRequest
from openenv_hub.server.episode_http import SESSION_HEADER, answer, unless_disconnected
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["SESSION_HEADER", "build_router"]

T = TypeVar("T")

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
        reply = await unless_disconnected(
            request.receive, handle_jsonrpc(pool, body, client=client)
        )
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
    return await unless_disconnected(request.receive, work())


def _episode_routes(router: APIRouter, pool: SessionPool) -> None:
    # What /reset and /step answer is episode_http.answer, which EpisodeDispatch calls before
    # the router (create_app); these routes describe them in the OpenAPI schema, and answer
    # the requests it passes on (an app served under a root_path).
    @router.post(
        "/reset", tags=["Environment Control"], response_model=StepResponse,
        openapi_extra=_documented(ResetRequest, required=False),
    )  # fmt: skip
    async def reset(http: Request) -> Response:
        return await _answered(pool, "reset", http)

    @router.post(
        "/step", tags=["Environment Control"], response_model=StepResponse,
        openapi_extra=_documented(StepRequest, required=True),
    )  # fmt: skip
    async def step(http: Request) -> Response:
        return await _answered(pool, "step", http)

    @router.get("/state", tags=["State Management"])
    async def state(http: Request, session_id: SessionHeader = None) -> dict[str, Any]:
        return await _stateless(http, pool, session_id, pool.state)


async def _answered(pool: SessionPool, method: str, http: Request) -> Response:
    reply = await answer(pool, method, await http.body(), http.scope["headers"], http.receive)
    return Response(reply, media_type="application/json")


def _documented(model: type[BaseModel], *, required: bool) -> dict[str, Any]:
    """The OpenAPI description of a body read by :func:`~openenv_hub.server.episode_http.answer` and of the session header."""
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
