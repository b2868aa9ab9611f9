"""``GET /api/spaces`` (and ``/api/models``, ``/api/datasets``): search, tags, sort and pages.

The rules live in :mod:`..listing`; this router gathers the repos the caller may see.

Layer: runtimes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from ..errors import HubError
from ..listing import ListQuery, next_link, page_of
from ..payloads import repo_info_json
from .deps import Context, OptionalUser, base_url, open_repo, repo_type_of

router = APIRouter()


@router.get("/api/{plural}")
def list_repos(plural: str, request: Request, context: Context, user: OptionalUser) -> JSONResponse:
    """One page of the visible repos of one type; ``Link: <...>; rel="next"`` if more follow."""
    params = list(request.query_params.multi_items())
    query = ListQuery.parse(repo_type_of(plural), params)
    infos: list[dict[str, Any]] = []
    for key in context.store.keys(query.repo_type):
        if not query.wants_id(key.repo_id, key.namespace):
            continue
        try:
            repo = open_repo(context, key, user, write=False)
        except HubError:
            continue  # private to someone else, or deleted meanwhile
        commit = repo.git.branch_head("main")
        infos.append(repo_info_json(key, repo.meta, repo.git, commit, base_url=base_url(request)))
    page, next_offset = page_of(infos, query)
    headers = {}
    if next_offset is not None:
        url = f"{base_url(request)}{request.url.path}"
        headers["Link"] = next_link(url, params, next_offset)
    return JSONResponse(page, headers=headers)
