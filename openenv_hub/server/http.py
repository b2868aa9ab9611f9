"""HTTP routes: ``/health``, ``/metadata``, ``/schema``, ``/reset``, ``/step``, ``/state``, ``/mcp``.

``/reset``, ``/step`` and ``/state`` are stateless as in OpenEnv (a fresh environment per
request) unless the request names a session in the ``X-OpenEnv-Session`` header, in which case
they drive that session (created with the ``openenv/session/create`` JSON-RPC method).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from openenv_hub.protocol import ResetRequest, StepRequest, describe_validation_error
from openenv_hub.server.mcp import handle_jsonrpc
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["SESSION_HEADER", "build_router"]

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
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @router.get("/metadata", tags=["Environment Info"])
    async def metadata() -> dict[str, Any]:
        return (await pool.metadata()).model_dump()

    @router.get("/schema", tags=["Schema"])
    async def schema() -> dict[str, Any]:
        return schemas

    @router.post("/mcp", tags=["MCP"])
    async def mcp(request: Request) -> JSONResponse:
        return JSONResponse(await handle_jsonrpc(pool, await request.body()))

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


def _episode_routes(router: APIRouter, pool: SessionPool) -> None:
    @router.post("/reset", tags=["Environment Control"], response_model=StepResponse)
    async def reset(
        request: Annotated[ResetRequest | None, Body()] = None,
        session_id: SessionHeader = None,
    ) -> dict[str, Any]:
        params = request.model_dump(exclude_unset=True) if request is not None else {}
        async with _session_for(pool, session_id) as session:
            return await pool.reset(session, params)

    @router.post("/step", tags=["Environment Control"], response_model=StepResponse)
    async def step(request: StepRequest, session_id: SessionHeader = None) -> dict[str, Any]:
        try:
            action = pool.parse_action(request.action)
        except ValidationError as exc:
            _, errors = describe_validation_error(exc, "action")
            raise HTTPException(status_code=422, detail=errors) from None
        params = request.model_dump(exclude_unset=True, exclude={"action"})
        async with _session_for(pool, session_id) as session:
            return await pool.step(session, action, params)

    @router.get("/state", tags=["State Management"])
    async def state(session_id: SessionHeader = None) -> dict[str, Any]:
        async with _session_for(pool, session_id) as session:
            return await pool.state(session)
