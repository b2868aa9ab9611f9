"""Repo lifecycle: create, delete, move, duplicate, settings and repo info.

Layer: runtimes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict

from ..auth import User
from ..errors import HubError
from ..payloads import SPACE_SDKS, repo_info_json
from ..space_runtime import without_runtime
from ..storage import KeyValue, RepoKey, RepoMeta
from .deps import (
    Context,
    CurrentUser,
    ReadableRepo,
    WritableRepo,
    base_url,
    open_repo,
)

router = APIRouter()

GITATTRIBUTES = b"# LocalHub stores every file as a plain git blob (no LFS).\n"


class KeyValueIn(BaseModel):
    """A secret or variable as sent in create/duplicate bodies."""

    key: str
    value: str = ""
    description: str | None = None


class _VisibilityBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    private: bool | None = None
    visibility: str | None = None

    def private_or(self, default: bool) -> bool:
        """``visibility`` (2.x clients) wins over ``private`` (older clients)."""
        if self.visibility is not None:
            if self.visibility not in ("public", "private", "protected"):
                raise HubError.bad_request(f"Invalid visibility: {self.visibility!r}")
            return self.visibility != "public"
        return default if self.private is None else self.private


class CreateRepoBody(_VisibilityBody):
    """Body of ``POST /api/repos/create``."""

    name: str
    organization: str | None = None
    type: str | None = None
    sdk: str | None = None
    hardware: str | None = None
    sleepTimeSeconds: int | None = None
    secrets: list[KeyValueIn] = []
    variables: list[KeyValueIn] = []


class RepoRefBody(BaseModel):
    """Body of ``DELETE /api/repos/delete``."""

    name: str
    organization: str | None = None
    type: str | None = None


class MoveRepoBody(BaseModel):
    """Body of ``POST /api/repos/move``."""

    fromRepo: str
    toRepo: str
    type: str | None = None


class DuplicateBody(_VisibilityBody):
    """Body of ``POST /api/{type}s/{ns}/{name}/duplicate``."""

    repository: str
    hardware: str | None = None
    sleepTimeSeconds: int | None = None
    secrets: list[KeyValueIn] = []
    variables: list[KeyValueIn] = []


def _entries(items: list[KeyValueIn]) -> dict[str, KeyValue]:
    return {item.key: KeyValue(item.value, item.description) for item in items}


def _new_key(user: User, repo_type: str | None, namespace: str | None, name: str) -> RepoKey:
    key = RepoKey.parse(repo_type or "model", f"{namespace or user.name}/{name}")
    if not key.is_valid():
        raise HubError.bad_request(
            f"Invalid repo name {key.repo_id!r}: use letters, digits, '-', '_' and '.', "
            "at most 96 characters, no '--' or '..'"
        )
    if not user.can_write(key.namespace):
        raise HubError.forbidden(
            f"You don't have the rights to create a repo under the namespace {key.namespace!r}"
        )
    return key


def _conflict(key: RepoKey, request: Request) -> HubError:
    message = f"You already created this {key.type} repo: {key.repo_id}"
    return HubError(409, message, extra={"url": f"{base_url(request)}/{key.web_path}"})


def _initial_files(key: RepoKey, sdk: str | None) -> dict[str, bytes]:
    files = {".gitattributes": GITATTRIBUTES}
    if key.type == "space":
        files["README.md"] = (
            f"---\ntitle: {key.name}\nemoji: 🚀\ncolorFrom: blue\ncolorTo: green\n"
            f"sdk: {sdk}\npinned: false\n---\n"
        ).encode()
    return files


@router.post("/api/repos/create")
def create_repo(
    body: CreateRepoBody, request: Request, context: Context, user: CurrentUser
) -> dict[str, Any]:
    """Create a repo with the Hub's initial commit; 409 (with ``url``) if it exists."""
    key = _new_key(user, body.type, body.organization, body.name)
    if key.type == "space" and body.sdk not in SPACE_SDKS:
        raise HubError.bad_request(f"Space sdk must be one of {sorted(SPACE_SDKS)}")
    meta = RepoMeta(
        private=body.private_or(False),
        sdk=body.sdk if key.type == "space" else None,
        hardware=body.hardware or "cpu-basic",
        sleep_time_s=body.sleepTimeSeconds,
        secrets=_entries(body.secrets),
        variables=_entries(body.variables),
    )
    if key.type == "space" and body.sdk != "static" and context.spaces is None:
        without_runtime(meta, key)
    try:
        context.store.create(key, meta, files=_initial_files(key, body.sdk), author=user.name)
    except FileExistsError:
        raise _conflict(key, request) from None
    if context.spaces is not None:
        context.spaces.added(key)
    url = f"{base_url(request)}/{key.web_path}"
    return {"url": url, "name": key.repo_id, "id": key.repo_id}


@router.delete("/api/repos/delete")
def delete_repo(body: RepoRefBody, context: Context, user: CurrentUser) -> dict[str, Any]:
    """Delete a repo the caller may write to."""
    key = RepoKey.parse(body.type or "model", f"{body.organization or user.name}/{body.name}")
    open_repo(context, key, user, write=True)
    try:
        context.store.delete(key)
    except FileNotFoundError:
        raise HubError.repo_not_found(key.repo_id) from None
    if context.spaces is not None:
        context.spaces.forget(key)
    return {}


@router.post("/api/repos/move")
def move_repo(
    body: MoveRepoBody, request: Request, context: Context, user: CurrentUser
) -> dict[str, Any]:
    """Rename a repo; the caller needs write rights on both namespaces."""
    source = RepoKey.parse(body.type or "model", body.fromRepo)
    open_repo(context, source, user, write=True)
    namespace, _, name = body.toRepo.partition("/")
    target = _new_key(user, source.type, namespace, name)
    try:
        context.store.move(source, target)
    except FileExistsError:
        raise _conflict(target, request) from None
    return {"url": f"{base_url(request)}/{target.web_path}"}


@router.post("/api/{plural}/{namespace}/{name}/duplicate")
def duplicate_repo(
    body: DuplicateBody, source: ReadableRepo, request: Request, context: Context, user: CurrentUser
) -> dict[str, Any]:
    """Copy history, branches, tags and variables; secrets only from the body."""
    namespace, _, name = body.repository.rpartition("/")
    target = _new_key(user, source.key.type, namespace or user.name, name)
    meta = RepoMeta(
        private=body.private_or(source.meta.private),
        sdk=source.meta.sdk,
        hardware=body.hardware or source.meta.hardware,
        sleep_time_s=body.sleepTimeSeconds,
        secrets=_entries(body.secrets),
        variables={**source.meta.variables, **_entries(body.variables)},
        duplicated_from=source.key.repo_id,
    )
    if target.type == "space" and meta.sdk != "static" and context.spaces is None:
        without_runtime(meta, target)
    try:
        context.store.duplicate(source.key, target, meta)
    except FileExistsError:
        raise _conflict(target, request) from None
    if context.spaces is not None:
        context.spaces.added(target)  # a copy runs as its source does, or says why it cannot
    return {"url": f"{base_url(request)}/{target.web_path}", "filesCopyPending": False}


class SettingsBody(_VisibilityBody):
    """Body of ``PUT /api/{type}s/{ns}/{name}/settings``."""

    gated: str | bool | None = None


@router.put("/api/{plural}/{namespace}/{name}/settings")
def update_settings(body: SettingsBody, repo: WritableRepo, context: Context) -> dict[str, Any]:
    """Change visibility; gating is accepted but has no effect here."""
    with context.store.edit_meta(repo.key) as meta:
        meta.private = body.private_or(meta.private)
    return {}


@router.get("/api/{plural}/{namespace}/{name}")
def repo_info(repo: ReadableRepo, request: Request, blobs: bool = False) -> dict[str, Any]:
    """Describe the repo at the head of ``main``."""
    commit = repo.git.branch_head("main")
    return repo_info_json(
        repo.key, repo.meta, repo.git, commit, base_url=base_url(request), blobs=blobs
    )


@router.get("/api/{plural}/{namespace}/{name}/revision/{revision:path}")
def repo_info_at(
    revision: str, repo: ReadableRepo, request: Request, blobs: bool = False
) -> dict[str, Any]:
    """Describe the repo at a branch, tag or commit."""
    commit = repo.resolve(revision)
    return repo_info_json(
        repo.key, repo.meta, repo.git, commit, base_url=base_url(request), blobs=blobs
    )
