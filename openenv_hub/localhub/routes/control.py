"""LocalHub's own routes under ``/_localhub``: health, request log, Space runtime control, likes.

They do not exist on the real Hub. Every one but ``/_localhub/health`` needs the admin token
(``Authorization: Bearer <admin token>``), whatever user tokens the caller holds: a request log
names private repos, build arguments may hold credentials, and a Space's ``host`` decides where
clients connect. What they show has its credentials replaced by ``***`` (:mod:`..redaction`).

A Space's app URL, ``/_localhub/apps/NS/NAME``, is served by ``proxy.py``.

Layer: runtimes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict, Field

from ..errors import HubError
from ..payloads import runtime_json
from ..space_runtime import STOPPED
from ..storage import RepoKey, RepoStore
from .deps import Context, repo_key, require_admin

router = APIRouter(prefix="/_localhub")
"""Open to anyone: only the liveness probe."""

admin = APIRouter(prefix="/_localhub", dependencies=[Depends(require_admin)])
"""Everything else: admin token only."""


class RuntimeUpdate(BaseModel):
    """Changes to a Space's simulated runtime; omitted fields are left alone.

    Attributes:
        stage: New current stage, e.g. ``BUILDING``, ``RUNNING``, ``RUNTIME_ERROR``.
        then: Stages to move through afterwards, one per ``GET .../runtime``.
        hardware: Hardware flavour to report.
        host: URL reported as ``space_info().host`` (e.g. a locally started app); a Space
            that was ``STOPPED`` (no runtime) is ``RUNNING`` from then on, unless ``stage``
            says otherwise.
        error_message: Reported as ``errorMessage``; cleared by an empty string.
    """

    model_config = ConfigDict(populate_by_name=True)

    stage: str | None = None
    then: list[str] | None = None
    hardware: str | None = None
    host: str | None = None
    error_message: str | None = Field(default=None, alias="errorMessage")


def update_runtime(store: RepoStore, key: RepoKey, update: RuntimeUpdate) -> dict[str, Any]:
    """Apply ``update`` to the Space ``key`` and return its new runtime JSON.

    Raises:
        HubError: 404 ``RepoNotFound`` if the Space does not exist.
    """
    if key.type != "space" or not store.exists(key):
        raise HubError.repo_not_found(key.repo_id)
    with store.edit_meta(key) as meta:
        if update.stage is not None:
            meta.stage = update.stage
        if update.then is not None:
            meta.next_stages = list(update.then)
        if update.hardware is not None:
            meta.hardware = update.hardware
        if update.host is not None:
            meta.host = update.host or None
            if meta.host and update.stage is None and meta.stage == STOPPED:
                meta.stage, meta.error_message = "RUNNING", None  # its app runs at ``host``
        if update.error_message is not None:
            meta.error_message = update.error_message or None
    return runtime_json(meta)


@router.get("/health")
def health() -> dict[str, bool]:
    """Liveness probe used while starting the server."""
    return {"ok": True}


@admin.get("/space-runtime")
def space_runtime(context: Context) -> dict[str, Any]:
    """Whether LocalHub builds and runs Docker Spaces, and if not, why."""
    if context.spaces is None:
        return {"enabled": False, "reason": "off (run_spaces=False)"}
    return context.spaces.describe()


@admin.get("/requests")
def requests_log(context: Context) -> list[dict[str, Any]]:
    """Every request served so far, oldest first."""
    return context.log.entries()


@admin.delete("/requests")
def clear_requests_log(context: Context) -> dict[str, Any]:
    """Forget the request log."""
    context.log.clear()
    return {}


@admin.post("/spaces/{namespace}/{name}/runtime")
def set_space_runtime(
    namespace: str, name: str, update: RuntimeUpdate, context: Context
) -> dict[str, Any]:
    """Script a Space's runtime (stage, later stages, host...)."""
    return update_runtime(context.store, RepoKey("space", namespace, name), update)


class LikesUpdate(BaseModel):
    """How many users like a repo (the Hub lets no script like one)."""

    likes: int = Field(ge=0)


def set_likes(store: RepoStore, key: RepoKey, likes: int) -> int:
    """Set the like count of ``key``.

    Raises:
        HubError: 404 ``RepoNotFound`` if the repo does not exist.
    """
    if not store.exists(key):
        raise HubError.repo_not_found(key.repo_id)
    with store.edit_meta(key) as meta:
        meta.likes = likes
    return meta.likes


@admin.post("/{plural}/{namespace}/{name}/likes")
def update_likes(
    plural: str, namespace: str, name: str, update: LikesUpdate, context: Context
) -> dict[str, Any]:
    """Set a repo's like count, which listings report and sort on."""
    return {"likes": set_likes(context.store, repo_key(plural, namespace, name), update.likes)}
