"""Git smart-HTTP for the same bare repos, through ``git http-backend`` (CGI).

URLs mirror the Hub: ``/spaces/NS/NAME[.git]/...``, ``/datasets/NS/NAME[.git]/...``
and ``/NS/NAME[.git]/...`` for models, each followed by ``info/refs``,
``git-upload-pack`` or ``git-receive-pack``. Credentials are HTTP Basic
``user:token``; git only sends them after a 401 with ``WWW-Authenticate``.

Layer: runtimes.
"""

from __future__ import annotations

import functools
import re
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .commit_body import spool_body
from .errors import HubError, error_response
from .gitrepo import git_environment
from .routes.deps import HubContext, open_repo
from .storage import PLURALS, RepoKey

_GIT_PATH = re.compile(
    r"/(?:(?P<plural>spaces|datasets)/)?(?P<namespace>[^/]+)/(?P<name>[^/]+?)(?:\.git)?"
    r"/(?P<action>info/refs|git-upload-pack|git-receive-pack)"
)
_METHODS = {"info/refs": "GET", "git-upload-pack": "POST", "git-receive-pack": "POST"}
_CHALLENGE = {"WWW-Authenticate": 'Basic realm="LocalHub"'}


@dataclass(frozen=True)
class GitRoute:
    """A smart-HTTP request: which repo, and which endpoint of the protocol."""

    key: RepoKey
    action: str

    def service(self, query: Mapping[str, str]) -> str:
        """``git-upload-pack`` (fetch) or ``git-receive-pack`` (push)."""
        return query.get("service", "") if self.action == "info/refs" else self.action


def match_git_path(path: str) -> GitRoute | None:
    """Recognise a smart-HTTP URL path, or return None for anything else."""
    match = _GIT_PATH.fullmatch(path)
    if match is None:
        return None
    repo_type = PLURALS[match["plural"]] if match["plural"] else "model"
    return GitRoute(RepoKey(repo_type, match["namespace"], match["name"]), match["action"])


def authorize(context: HubContext, route: GitRoute, request: Request) -> str | None:
    """Check access; return the user to pass as ``REMOTE_USER`` when pushing.

    Anonymous callers get a 401 challenge whenever access is refused, so git
    retries with credentials (a private repo looks missing until then).
    """
    try:
        user = context.tokens.authenticate(request.headers.get("authorization"))
    except HubError:
        raise HubError(401, "Invalid token", headers=_CHALLENGE) from None
    pushing = route.service(request.query_params) == "git-receive-pack"
    try:
        open_repo(context, route.key, user, write=pushing)
    except HubError as error:
        if user is None and error.status in (401, 404):
            raise HubError(401, "Authentication required", headers=_CHALLENGE) from None
        raise
    return user.name if pushing and user is not None else None


def parse_cgi_output(output: bytes) -> tuple[int, dict[str, str], bytes]:
    """Split CGI output into status, headers and body."""
    crlf, lf = output.find(b"\r\n\r\n"), output.find(b"\n\n")
    if crlf != -1 and (lf == -1 or crlf < lf):
        head, body = output[:crlf], output[crlf + 4 :]
    elif lf != -1:
        head, body = output[:lf], output[lf + 2 :]
    else:
        head, body = output, b""
    status, headers = 200, {}
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.split()[0])
        elif name:
            headers[name.strip()] = value.strip()
    return status, headers, body


def run_http_backend(
    repo_dir: Path, route: GitRoute, request: Request, body: Path, remote_user: str | None
) -> Response:
    """Run ``git http-backend`` for one request (its body in the file ``body``) and convert
    its CGI answer."""
    env = {
        "GIT_PROJECT_ROOT": str(repo_dir.parent),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": f"/{repo_dir.name}/{route.action}",
        "REQUEST_METHOD": request.method,
        "QUERY_STRING": request.url.query,
        "CONTENT_TYPE": request.headers.get("content-type", ""),
        "CONTENT_LENGTH": str(body.stat().st_size),
        "REMOTE_ADDR": request.client.host if request.client else "127.0.0.1",
    }
    optional = {
        "REMOTE_USER": remote_user,
        "GIT_PROTOCOL": request.headers.get("git-protocol"),
        "HTTP_CONTENT_ENCODING": request.headers.get("content-encoding"),
    }
    env.update({name: value for name, value in optional.items() if value})
    with body.open("rb") as stdin:
        proc = subprocess.run(
            ["git", "http-backend"],
            stdin=stdin,
            env=git_environment(env),
            capture_output=True,
            check=False,
        )
    if not proc.stdout:
        stderr = proc.stderr.decode(errors="replace").strip()
        raise HubError(500, f"git http-backend failed: {stderr}")
    status, headers, content = parse_cgi_output(proc.stdout)
    return Response(content, status_code=status, headers=headers)


class GitHttpApp:
    """ASGI app serving git clone, fetch and push for LocalHub repos.

    Args:
        context: Shared server state (store and tokens).
    """

    def __init__(self, context: HubContext) -> None:
        self.context = context

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one smart-HTTP request (paths not matching answer 404)."""
        request = Request(scope, receive)
        try:
            response = await self._handle(request)
        except HubError as error:
            response = error_response(error)
        await response(scope, receive, send)

    async def _handle(self, request: Request) -> Response:
        route = match_git_path(request.url.path)
        if route is None:
            raise HubError(404, "Not a git smart-HTTP path")
        if request.method != _METHODS[route.action]:
            raise HubError(405, f"{route.action} expects {_METHODS[route.action]}")
        remote_user = authorize(self.context, route, request)
        tmp = self.context.store.root / "tmp"
        with tempfile.TemporaryDirectory(prefix="git-", dir=tmp) as spool:
            body = await spool_body(request.stream(), Path(spool) / "body")  # a push: to disk
            repo_dir = self.context.store.path(route.key)
            run = functools.partial(run_http_backend, repo_dir, route, request, body, remote_user)
            response = await anyio.to_thread.run_sync(run)
        spaces = self.context.spaces
        if spaces is not None and route.action == "git-receive-pack":
            spaces.changed(route.key)  # a push to main builds the Space again
        return response
