"""The task API (``/list_environments``, ``/{env_name}/splits``, ``/tasks``, ...), as OpenEnv 0.10
serves it for environments that hold datasets of tasks.

An environment opts in by defining any of ``list_splits()``, ``list_tasks(split)``,
``num_tasks(split)``, ``get_task(split, index)`` and ``get_task_range(split, start, stop)``
(plain or ``async``). Missing methods answer 501.

Layer: server.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict

from openenv_hub.server.sessions import SessionPool

__all__ = ["build_task_router"]

_SPLIT_TYPES = {"train", "validation", "test"}


class _Split(BaseModel):
    model_config = ConfigDict(extra="forbid")
    split: str


class _Index(_Split):
    index: int


class _Range(_Split):
    start: int | None = None
    stop: int | None = None


def build_task_router(pool: SessionPool, env_name: str) -> APIRouter:
    router = APIRouter(tags=["Task API"])

    async def call(name: str, requested_env: str, *args: Any) -> Any:
        if requested_env.lower() != env_name.lower():
            raise HTTPException(404, f"unknown environment '{requested_env}'")
        async with pool.ephemeral() as session:
            try:
                return await pool.invoke(session, name, *args)
            except (AttributeError, NotImplementedError):
                raise HTTPException(501, f"{name} is not supported for this environment") from None
            except IndexError:
                raise HTTPException(400, "Invalid task index") from None

    @router.get("/list_environments")
    async def list_environments() -> list[str]:
        return [env_name]

    @router.get("/{env}/splits")
    async def splits(env: str) -> list[Any]:
        return [_split(s) for s in await call("list_splits", env)]

    @router.post("/{env}/tasks")
    async def tasks(env: str, body: _Split) -> dict[str, Any]:
        return {"tasks": _jsonable(await call("list_tasks", env, body.split)), "env_name": env_name}

    @router.post("/{env}/num_tasks")
    async def num_tasks(env: str, body: _Split) -> dict[str, Any]:
        return {"num_tasks": await call("num_tasks", env, body.split)}

    @router.post("/{env}/task")
    async def task(env: str, body: _Index) -> dict[str, Any]:
        return {"task": _jsonable(await call("get_task", env, body.split, body.index))}

    @router.post("/{env}/task_range")
    async def task_range(env: str, body: _Range) -> dict[str, Any]:
        found = await call("get_task_range", env, body.split, body.start, body.stop)
        return {"tasks": _jsonable(found)}

    return router


def _split(split: Any) -> Any:
    if isinstance(split, str):
        return {"name": split, "type": split if split in _SPLIT_TYPES else "validation"}
    return _jsonable(split)


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
