"""Writing files: ``preupload`` negotiation and NDJSON ``commit``.

LocalHub always answers ``uploadMode: "regular"``, so the client inlines every
file as base64 in the commit and never needs LFS or xet.

Layer: runtimes.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from pydantic import BaseModel

from ..commit_body import CommitPayload, read_commit_body, spool_body
from ..errors import HubError
from ..gitops import Author, commit_files
from .deps import Context, CurrentUser, HubContext, OpenRepo, WritableRepo, base_url

router = APIRouter()


class PreuploadFile(BaseModel):
    """One file the client intends to upload."""

    path: str
    size: int | None = None
    sample: str | None = None


class PreuploadBody(BaseModel):
    """Body of ``POST .../preupload/{revision}``."""

    files: list[PreuploadFile]
    gitIgnore: str | None = None


def _branch_head(repo: OpenRepo, revision: str) -> str:
    head = repo.git.branch_head(revision)
    if head is not None:
        return head
    if repo.git.resolve(revision) is not None:
        raise HubError.bad_request(f"Can only commit to a branch, not to {revision!r}")
    raise HubError.revision_not_found(revision)


@router.post("/api/{plural}/{namespace}/{name}/preupload/{revision:path}")
def preupload(revision: str, body: PreuploadBody, repo: WritableRepo) -> dict[str, Any]:
    """Tell the client to inline every file; ``oid`` is the current blob id, if any.

    The client skips files whose git blob sha equals ``oid``.
    """
    head = _branch_head(repo, revision)
    files = []
    for item in body.files:
        entry = repo.git.entry(head, item.path.strip("/"))
        oid = entry.oid if entry is not None and entry.type == "file" else None
        files.append(
            {"path": item.path, "uploadMode": "regular", "shouldIgnore": False, "oid": oid}
        )
    return {"files": files, "commitOid": head}


@router.post("/api/{plural}/{namespace}/{name}/commit/{revision:path}")
async def commit(
    revision: str, request: Request, repo: WritableRepo, user: CurrentUser, context: Context
) -> dict[str, Any]:
    """Apply file additions and deletions as one commit on a branch.

    The body goes to disk as it arrives, and big files' contents are decoded from there into
    files of their own (:mod:`..commit_body`), so memory stays small whatever the commit holds.
    """
    if request.query_params.get("create_pr"):
        raise HubError.bad_request("Pull requests are not supported by LocalHub")
    with tempfile.TemporaryDirectory(prefix="upload-", dir=context.store.root / "tmp") as tmp:
        body = await spool_body(request.stream(), Path(tmp) / "body.ndjson")
        run = functools.partial(_read_and_commit, context, repo, revision, body, user.name)
        sha = await anyio.to_thread.run_sync(run)
    if context.spaces is not None:
        context.spaces.changed(repo.key)
    return {
        "success": True,
        "commitOid": sha,
        "commitUrl": f"{base_url(request)}/{repo.key.web_path}/commit/{sha}",
        "hookOutput": "",
        "pullRequestUrl": None,
    }


def _read_and_commit(
    context: HubContext, repo: OpenRepo, revision: str, body: Path, author: str
) -> str:
    payload = read_commit_body(body, body.parent)
    return _commit_locked(context, repo, revision, payload, author)


def _commit_locked(
    context: HubContext, repo: OpenRepo, revision: str, payload: CommitPayload, author: str
) -> str:
    with context.store.lock(repo.key):
        _branch_head(repo, revision)
        return commit_files(
            repo.git,
            revision,
            payload.operations,
            message=payload.message,
            author=Author.for_user(author),
            parent_commit=payload.parent_commit,
        )
