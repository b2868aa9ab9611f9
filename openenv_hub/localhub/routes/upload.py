"""Writing files: ``preupload`` negotiation and NDJSON ``commit``.

LocalHub always answers ``uploadMode: "regular"``, so the client inlines every
file as base64 in the commit and never needs LFS or xet.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from pydantic import BaseModel

from ..errors import HubError
from ..gitops import Author, DeletePath, FileOp, PutFile, commit_files
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


@dataclass
class CommitPayload:
    """A parsed NDJSON commit request."""

    summary: str
    description: str = ""
    parent_commit: str | None = None
    operations: list[FileOp] = field(default_factory=list)

    @property
    def message(self) -> str:
        """Git commit message: summary, blank line, description."""
        return f"{self.summary}\n\n{self.description}" if self.description else self.summary


def _operation(key: str, value: dict[str, Any]) -> FileOp:
    path = value.get("path")
    if not isinstance(path, str):
        raise HubError.bad_request(f"Commit line {key!r} needs a string 'path'")
    if key == "file":
        if value.get("encoding", "base64") != "base64":
            raise HubError.bad_request("Only base64-encoded file content is supported")
        try:
            return PutFile(path, base64.b64decode(value.get("content", ""), validate=True))
        except (binascii.Error, TypeError):
            raise HubError.bad_request(f"Invalid base64 content for {path!r}") from None
    if key in ("deletedFile", "deletedFolder"):
        return DeletePath(path, folder=key == "deletedFolder")
    if key == "lfsFile":
        raise HubError.bad_request(
            f"LFS is not supported by LocalHub ({path!r}); preupload always answers 'regular'"
        )
    raise HubError.bad_request(f"Unknown commit operation {key!r}")


def parse_commit_payload(body: bytes) -> CommitPayload:
    """Parse the NDJSON body of ``POST .../commit/{revision}``.

    Raises:
        HubError: 400 for malformed lines, a missing header, or LFS files.
    """
    header: dict[str, Any] | None = None
    operations: list[FileOp] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            key, value = item["key"], item["value"]
        except (ValueError, KeyError, TypeError):
            raise HubError.bad_request(f"Line {number} is not a commit item") from None
        if key == "header":
            header = value
        else:
            operations.append(_operation(key, value))
    if not header or not header.get("summary"):
        raise HubError.bad_request("The commit needs a header line with a 'summary'")
    return CommitPayload(
        summary=header["summary"],
        description=header.get("description") or "",
        parent_commit=header.get("parentCommit"),
        operations=operations,
    )


@router.post("/api/{plural}/{namespace}/{name}/commit/{revision:path}")
async def commit(
    revision: str, request: Request, repo: WritableRepo, user: CurrentUser, context: Context
) -> dict[str, Any]:
    """Apply file additions and deletions as one commit on a branch."""
    if request.query_params.get("create_pr"):
        raise HubError.bad_request("Pull requests are not supported by LocalHub")
    payload = parse_commit_payload(await request.body())
    run = functools.partial(_commit_locked, context, repo, revision, payload, user.name)
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
