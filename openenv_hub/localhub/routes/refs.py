"""Git history endpoints: refs, commit listing, tags and branches.

Layer: runtimes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from ..errors import HubError
from ..gitops import Author, create_branch, create_tag, delete_ref
from ..payloads import commit_json, refs_json
from .deps import Context, CurrentUser, ReadableRepo, WritableRepo

router = APIRouter()


@router.get("/api/{plural}/{namespace}/{name}/refs")
def list_refs(repo: ReadableRepo, include_prs: bool = False) -> dict[str, Any]:
    """Branches and tags, each with the commit it points to."""
    return refs_json(repo.git.refs(), include_prs=include_prs)


@router.get("/api/{plural}/{namespace}/{name}/commits/{revision:path}")
def list_commits(revision: str, repo: ReadableRepo) -> list[dict[str, Any]]:
    """Commits reachable from a revision, newest first, in a single page."""
    return [commit_json(record) for record in repo.git.log(repo.resolve(revision))]


class TagBody(BaseModel):
    """Body of ``POST .../tag/{revision}``, as ``HfApi.create_tag`` sends it."""

    tag: str
    message: str | None = None


@router.post("/api/{plural}/{namespace}/{name}/tag/{revision:path}")
def post_tag(
    revision: str, body: TagBody, repo: WritableRepo, user: CurrentUser, context: Context
) -> dict[str, Any]:
    """Tag a revision; annotated when a message is given. 409 if the tag exists."""
    target = repo.resolve(revision)
    with context.store.lock(repo.key):
        create_tag(
            repo.git, body.tag, target, author=Author.for_user(user.name), message=body.message
        )
    return {}


@router.delete("/api/{plural}/{namespace}/{name}/tag/{tag:path}")
def remove_tag(tag: str, repo: WritableRepo) -> dict[str, Any]:
    """Delete a tag; 404 ``RevisionNotFound`` if it does not exist."""
    delete_ref(repo.git, f"refs/tags/{tag}")
    return {}


class BranchBody(BaseModel):
    """Body of ``POST .../branch/{branch}``."""

    startingPoint: str | None = None


@router.post("/api/{plural}/{namespace}/{name}/branch/{branch:path}")
def post_branch(
    branch: str, repo: WritableRepo, context: Context, body: BranchBody | None = None
) -> dict[str, Any]:
    """Create a branch at ``startingPoint`` (default: ``main``). 409 if it exists."""
    target = repo.resolve((body and body.startingPoint) or "main")
    with context.store.lock(repo.key):
        create_branch(repo.git, branch, target)
    return {}


@router.delete("/api/{plural}/{namespace}/{name}/branch/{branch:path}")
def remove_branch(branch: str, repo: WritableRepo) -> dict[str, Any]:
    """Delete a branch other than ``main``."""
    if branch == "main":
        raise HubError.forbidden("The default branch 'main' cannot be deleted")
    delete_ref(repo.git, f"refs/heads/{branch}")
    return {}
