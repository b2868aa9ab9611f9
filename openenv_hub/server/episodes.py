"""``GET /episodes``: the latest episodes a recording server wrote, while it runs.

A server started with ``create_app(..., trajectories=PATH)`` keeps its latest episodes in memory
(:attr:`~openenv_hub.trajectories.ServerRecorder.recent`), with the ids of the snapshots it took
after each step, so that a fork at one is exact while the server runs
(:func:`~openenv_hub.client.fork.fork_episode`). This route gives them out, newest last, as the
records :func:`~openenv_hub.trajectories.read_records` reads from a file::

    GET /episodes?limit=5
    200 {"episodes": [[{"episode_id": ..., "step": 0, ...}, ...], ...], "kept": 50}

They are every client's episodes, so the route follows the rule of who may watch
(:func:`~openenv_hub.server.watch.watch_rule`): 403 where watching is off, saying how to turn it
on; 404 where the server records nothing.

Layer: server.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from openenv_hub.server.sessions import SessionPool
from openenv_hub.server.watch import watching_refused_message
from openenv_hub.trajectories.server import RECENT_EPISODES, server_recorder

__all__ = ["EPISODES_ROUTE", "build_episodes_router"]

EPISODES_ROUTE = "/episodes"


def build_episodes_router(pool: SessionPool) -> APIRouter:
    """The route of the module's docstring, for ``pool``'s recorder (found when asked)."""
    router = APIRouter(tags=["Trajectories"])

    @router.get(EPISODES_ROUTE)
    async def episodes(
        limit: int = Query(RECENT_EPISODES, ge=1, le=RECENT_EPISODES),
    ) -> Any:
        recorder = server_recorder(pool.observers)
        if recorder is None:
            return _refusal(404, "This server records no episodes: start it with "
                            "create_app(..., trajectories='episodes.jsonl').", "NOT_RECORDING")  # fmt: skip
        rule = pool.watch_rule()
        if not rule.allowed:
            return _refusal(403, watching_refused_message(rule), "WATCHING_OFF")
        kept = list(recorder.recent)
        return {"episodes": kept[-limit:], "kept": recorder.recent.maxlen}

    return router


def _refusal(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"detail": message, "code": code}, status_code=status)
