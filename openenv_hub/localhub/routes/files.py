"""Reading files: tree listings, paths-info and ``resolve`` downloads.

Revisions arrive percent-encoded (``feat%2Fx``) and Starlette decodes ``%2F``
before routing, so routes whose revision is followed by a file path split the
*raw* path themselves.

Layer: runtimes.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs, unquote

from fastapi import APIRouter, Request, Response

from ..errors import HubError
from ..gitrepo import TreeEntry
from ..payloads import tree_entry_json
from ..storage import RepoKey
from .deps import Context, OpenRepo, OptionalUser, ReadableRepo, open_repo

router = APIRouter()

_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def revision_and_path(request: Request, skip: int) -> tuple[str, str]:
    """Split the raw path after ``skip`` segments into a revision and a file path.

    Args:
        request: The request.
        skip: Number of leading segments (counting the empty one before the
            first ``/``) that precede the revision.
    """
    raw = request.scope.get("raw_path") or request.url.path.encode()
    segments = raw.decode("utf-8", "replace").split("/")[skip:]
    if not segments or not segments[0]:
        raise HubError.bad_request("Missing revision in path")
    return unquote(segments[0]), unquote("/".join(segments[1:])).strip("/")


def _listing(repo: OpenRepo, commit: str, path: str, recursive: bool) -> list[TreeEntry]:
    entry = repo.git.entry(commit, path)
    if entry is None:
        raise HubError.entry_not_found(path, commit)
    if entry.type == "file":
        return [entry]
    return repo.git.list_tree(commit, path, recursive=recursive)


@router.get("/api/{plural}/{namespace}/{name}/tree/{rest:path}")
def list_tree(
    repo: ReadableRepo,
    request: Request,
    recursive: bool = False,
    expand: bool = False,
) -> list[dict[str, Any]]:
    """List a folder (``recursive`` for all descendants); no pagination."""
    revision, path = revision_and_path(request, skip=6)
    commit = repo.resolve(revision)
    return [tree_entry_json(entry) for entry in _listing(repo, commit, path, recursive)]


async def _requested_paths(request: Request) -> list[str]:
    body = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        paths = json.loads(body or b"{}").get("paths", [])
    else:
        paths = parse_qs(body.decode()).get("paths", [])
    return [paths] if isinstance(paths, str) else list(paths)


@router.post("/api/{plural}/{namespace}/{name}/paths-info/{revision:path}")
async def paths_info(revision: str, repo: ReadableRepo, request: Request) -> list[dict[str, Any]]:
    """Describe the given paths; missing ones are left out, as on the Hub."""
    commit = repo.resolve(revision)
    found = []
    for path in await _requested_paths(request):
        entry = repo.git.entry(commit, path.strip("/"))
        if entry is not None:
            found.append(tree_entry_json(entry))
    return found


def _content_response(request: Request, content: bytes, headers: dict[str, str]) -> Response:
    """Full body, or one ``Range`` of it (the client resumes downloads with it)."""
    size = len(content)
    match = _RANGE.fullmatch(request.headers.get("range", "").strip())
    if match is None or match.groups() == ("", ""):
        return Response(content, media_type="application/octet-stream", headers=headers)
    first, last = match.groups()
    if first:
        start, end = int(first), min(int(last) if last else size - 1, size - 1)
    else:
        start, end = max(size - int(last), 0), size - 1
    if start >= size or start > end:
        return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    headers = {**headers, "Content-Range": f"bytes {start}-{end}/{size}"}
    body = content[start : end + 1]
    return Response(body, status_code=206, media_type="application/octet-stream", headers=headers)


def _resolve(
    request: Request, context: Context, user: OptionalUser, key: RepoKey, skip: int
) -> Response:
    repo = open_repo(context, key, user, write=False)
    revision, path = revision_and_path(request, skip=skip)
    commit = repo.resolve(revision)
    entry = repo.git.entry(commit, path) if path else None
    if entry is None or entry.type != "file":
        raise HubError.entry_not_found(path, commit)
    headers = {
        "X-Repo-Commit": commit,
        "ETag": f'"{entry.oid}"',
        "Accept-Ranges": "bytes",
    }
    return _content_response(request, repo.git.read_blob(entry.oid), headers)


@router.api_route("/spaces/{namespace}/{name}/resolve/{rest:path}", methods=["GET", "HEAD"])
def resolve_space_file(
    namespace: str, name: str, request: Request, context: Context, user: OptionalUser
) -> Response:
    """Download a file of a Space at a branch, tag or commit."""
    return _resolve(request, context, user, RepoKey("space", namespace, name), skip=5)


@router.api_route("/datasets/{namespace}/{name}/resolve/{rest:path}", methods=["GET", "HEAD"])
def resolve_dataset_file(
    namespace: str, name: str, request: Request, context: Context, user: OptionalUser
) -> Response:
    """Download a file of a dataset at a branch, tag or commit."""
    return _resolve(request, context, user, RepoKey("dataset", namespace, name), skip=5)


@router.api_route("/{namespace}/{name}/resolve/{rest:path}", methods=["GET", "HEAD"])
def resolve_model_file(
    namespace: str, name: str, request: Request, context: Context, user: OptionalUser
) -> Response:
    """Download a file of a model at a branch, tag or commit."""
    return _resolve(request, context, user, RepoKey("model", namespace, name), skip=4)
