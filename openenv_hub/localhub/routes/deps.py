"""Request-scoped helpers shared by the routers: server state, caller, repo access.

Layer: runtimes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from ..auth import TokenRegistry, User, is_admin
from ..errors import HubError
from ..gitrepo import GitRepo
from ..jobs import JobRunner
from ..requestlog import RequestLog
from ..space_runtime import SpaceRuntime
from ..storage import PLURALS, RepoKey, RepoMeta, RepoStore, RepoType


@dataclass
class HubContext:
    """Everything a handler needs besides the request."""

    store: RepoStore
    tokens: TokenRegistry
    log: RequestLog
    admin_token: str  # for the control routes under /_localhub
    max_upload_bytes: int  # the largest body of an upload (commit, git push, app request)
    spaces: SpaceRuntime | None = None  # builds and runs Docker Spaces, when enabled
    jobs: JobRunner | None = None  # runs Jobs on the Docker engine, when enabled


def get_context(request: Request) -> HubContext:
    """The server state attached to the app by :func:`~..app.create_app`."""
    context: HubContext = request.app.state.localhub
    return context


Context = Annotated[HubContext, Depends(get_context)]


def get_user(request: Request, context: Context) -> User | None:
    """The caller, or None when anonymous; unknown tokens are rejected with 401."""
    return context.tokens.authenticate(request.headers.get("authorization"))


OptionalUser = Annotated[User | None, Depends(get_user)]


def require_user(user: OptionalUser) -> User:
    """The caller; anonymous requests are rejected with 401."""
    if user is None:
        raise HubError.unauthorized()
    return user


CurrentUser = Annotated[User, Depends(require_user)]


def require_admin(request: Request, context: Context) -> None:
    """Let only holders of the admin token through (401 otherwise, whoever the caller is)."""
    if not is_admin(request.headers.get("authorization"), context.admin_token):
        raise HubError.unauthorized(
            "LocalHub's control routes need its admin token: send 'Authorization: Bearer "
            "<admin token>' (printed when LocalHub starts, or set by "
            "$OPENENV_LOCALHUB_ADMIN_TOKEN; LocalHub.admin_token in Python)"
        )


def base_url(request: Request) -> str:
    """Scheme and host the client used, so returned URLs match its endpoint."""
    return str(request.base_url).rstrip("/")


def repo_type_of(plural: str) -> RepoType:
    """``model``, ``dataset`` or ``space`` for the ``{plural}`` of an API path."""
    repo_type = PLURALS.get(plural)
    if repo_type is None:
        raise HubError(404, f"Unknown repo type in path: {plural!r}")
    return repo_type


def repo_key(plural: str, namespace: str, name: str) -> RepoKey:
    """Key from the ``/api/{plural}/{namespace}/{name}`` path parameters."""
    return RepoKey(repo_type_of(plural), namespace, name)


@dataclass
class OpenRepo:
    """A repo the caller is allowed to use, with its metadata loaded."""

    key: RepoKey
    meta: RepoMeta
    git: GitRepo

    def require_space(self) -> OpenRepo:
        """Return self, or fail with 404 when the repo is not a Space."""
        if self.key.type != "space":
            raise HubError(404, "This endpoint only exists for Spaces")
        return self

    def resolve(self, revision: str) -> str:
        """Resolve a branch, tag or sha to a commit sha, or fail with ``RevisionNotFound``."""
        commit = self.git.resolve(revision)
        if commit is None:
            raise HubError.revision_not_found(revision)
        return commit


def open_repo(context: HubContext, key: RepoKey, user: User | None, *, write: bool) -> OpenRepo:
    """Check that ``user`` may read (or write) ``key`` and open it.

    Missing repos and private repos the caller cannot see both answer 404
    ``RepoNotFound``, so private names do not leak.
    """
    if not context.store.exists(key):
        raise HubError.repo_not_found(key.repo_id)
    meta = context.store.read_meta(key)
    if meta.private and (user is None or not user.can_see(key.namespace)):
        raise HubError.repo_not_found(key.repo_id)
    if write:
        if user is None:
            raise HubError.unauthorized()
        if not user.can_write(key.namespace):
            raise HubError.forbidden(
                f"You don't have the rights to write to {key.type} {key.repo_id!r} "
                f"(token of {user.name!r}, role {user.role!r})"
            )
    return OpenRepo(key, meta, context.store.git(key))


def readable_repo(
    context: Context, user: OptionalUser, key: Annotated[RepoKey, Depends(repo_key)]
) -> OpenRepo:
    """The repo of the request path, if the caller may read it."""
    return open_repo(context, key, user, write=False)


def writable_repo(
    context: Context, user: OptionalUser, key: Annotated[RepoKey, Depends(repo_key)]
) -> OpenRepo:
    """The repo of the request path, if the caller may write to it."""
    return open_repo(context, key, user, write=True)


ReadableRepo = Annotated[OpenRepo, Depends(readable_repo)]
WritableRepo = Annotated[OpenRepo, Depends(writable_repo)]
