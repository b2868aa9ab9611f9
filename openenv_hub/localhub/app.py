"""The LocalHub ASGI application: Hub API and git smart-HTTP behind one entry point.

The outer :class:`LocalHubApp` logs every request and guarantees that no
exception reaches the server. An escaping exception makes uvicorn drop the
keep-alive connection, and the client's *next* request then fails with a
confusing "connection reset".

Layer: runtimes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from email.utils import formatdate
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from starlette.requests import ClientDisconnect
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive, Scope, Send

from .auth import TokenRegistry, User, generated_admin_token, token_from_header, token_registry
from .body_limit import BodyLimit, declared_size, limit_for
from .errors import HubError, error_response
from .git_http import GitHttpApp, match_git_path
from .jobs import JobRunner
from .jobs_proxy import PREFIX as EXPOSE_PREFIX
from .jobs_proxy import JobExposeProxy
from .proxy import PREFIX as APPS_PREFIX
from .proxy import SpaceAppProxy
from .redaction import redact_query
from .requestlog import RequestLog, RequestRecord
from .routes import account, control, files, jobs, listing, refs, repos, spaces, upload
from .routes.deps import HubContext
from .space_hosts import space_for_host
from .space_runtime import SpaceRuntime
from .storage import RepoStore

logger = logging.getLogger("openenv_hub.localhub")

DEFAULT_MAX_UPLOAD_MB = 1024


def _internal_error(exc: BaseException) -> JSONResponse:
    message = f"LocalHub internal error: {type(exc).__name__}: {exc}"
    return error_response(HubError(500, message))


async def _hub_error_handler(_: Request, exc: Exception) -> Response:
    assert isinstance(exc, HubError)
    return error_response(exc)


async def _unexpected_error_handler(_: Request, exc: Exception) -> Response:
    if isinstance(exc, ClientDisconnect):  # gone, or cut off by the body limit: nobody to tell
        return Response(status_code=400)
    logger.error("Unhandled error in LocalHub", exc_info=exc)
    return _internal_error(exc)


def build_api(context: HubContext) -> FastAPI:
    """The FastAPI app with every Hub API and control route."""
    api = FastAPI(
        title="LocalHub", docs_url="/_localhub/docs", openapi_url="/_localhub/openapi.json"
    )
    api.state.localhub = context
    api.add_exception_handler(HubError, _hub_error_handler)
    api.add_exception_handler(Exception, _unexpected_error_handler)
    api.include_router(control.admin)
    for module in (control, jobs, account, listing, repos, refs, upload, spaces, files):
        api.include_router(module.router)
    return api


class LocalHubApp:
    """ASGI entry point: git paths to :class:`GitHttpApp`, Space app URLs (HTTP and WebSocket;
    a Space's own origin, ``NS--NAME.localhost``, or its path) to :class:`SpaceAppProxy`, Jobs'
    exposed ports to :class:`JobExposeProxy`, the rest to FastAPI.

    Attributes:
        context: Shared state (store, tokens, request log).
        api: The FastAPI application.
        git: The git smart-HTTP application.
    """

    def __init__(self, context: HubContext) -> None:
        self.context = context
        self.api = build_api(context)
        self.git = GitHttpApp(context)
        self.apps = SpaceAppProxy(context)
        self.exposed = JobExposeProxy(context)
        self.closing = False
        """Set when the server begins to shut down: a request cancelled from then on ends
        quietly (a 503 if nothing was answered yet) instead of as a traceback in the log."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Dispatch, record, and turn any escaping exception into a JSON 500."""
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        answered: list[bool] = []

        async def tracked_send(message: Message) -> None:
            answered.append(True)
            await send(message)

        try:
            await self._dispatch(scope, receive, tracked_send)
        except asyncio.CancelledError:
            if not self.closing:
                raise
            if scope["type"] == "http" and not answered:
                response = error_response(HubError(503, "LocalHub is shutting down"))
                await response(scope, receive, send)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        to_an_app = self._to_an_app(scope)
        if scope["type"] == "websocket" and to_an_app:
            await self.apps(scope, receive, send)
            return
        if scope["type"] == "websocket" and scope["path"].startswith(EXPOSE_PREFIX):
            await self.exposed(scope, receive, send)
            return
        if scope["type"] != "http":
            await self.api(scope, receive, send)
            return
        started = time.perf_counter()
        response: dict[str, Any] = {}

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = _dated(message)
                response["status"] = message["status"]
                response["headers"] = dict(message.get("headers", []))
            await send(message)

        target: Any = self.git if match_git_path(scope["path"]) else self.api
        if to_an_app:
            target = self.apps
        elif scope["path"].startswith(EXPOSE_PREFIX):
            target = self.exposed
        upload = self.context.max_upload_bytes
        limit = upload if to_an_app else limit_for(scope["path"], upload)
        body = BodyLimit(limit, scope, receive, recording_send)
        try:
            if (declared_size(scope) or 0) > body.limit:
                await body.refuse()  # never read
            else:
                await target(scope, body.receive, body.send)
        except Exception as exc:
            if "status" not in response:
                logger.error("Unhandled error in LocalHub", exc_info=exc)
                await _internal_error(exc)(scope, receive, recording_send)
        finally:
            self._record(scope, response, time.perf_counter() - started)

    def _to_an_app(self, scope: Scope) -> bool:
        """Whether ``scope`` is a request to a Space's app: at its own origin (its ``Host``,
        ``NS--NAME.localhost``), or at its path on LocalHub."""
        if scope["path"].startswith(APPS_PREFIX):
            return True
        host = next((v for k, v in scope["headers"] if k == b"host"), b"")
        return space_for_host(host.decode("latin-1"), self.context.store) is not None

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """At shutdown, close the proxy's connections to Space apps before the loop ends."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.apps.aclose()
                await self.exposed.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _record(self, scope: Scope, response: Mapping[str, Any], elapsed_s: float) -> None:
        headers = {key.decode("latin-1"): value for key, value in scope["headers"]}
        token = token_from_header(headers.get("authorization", b"").decode("latin-1"))
        user = self.context.tokens.user_for(token) if token else None
        error_code = response.get("headers", {}).get(b"x-error-code")
        self.context.log.record(
            RequestRecord(
                method=scope["method"],
                host=headers.get("host", b"").decode("latin-1"),
                path=scope["path"],
                query=redact_query(scope.get("query_string", b"").decode("latin-1")),
                status=response.get("status", 500),
                duration_ms=round(elapsed_s * 1000, 2),
                user=user.name if user else None,
                error_code=error_code.decode("latin-1") if error_code else None,
            )
        )


def _dated(start: Message) -> Message:
    """The response's start with a ``Date`` of now. The server's own is refreshed once a
    second, and clients read it as the end of a log's replay (``fetch_job_logs``), so a stale
    one would cut off the lines of the last second."""
    headers = list(start.get("headers", []))
    if any(key.lower() == b"date" for key, _ in headers):
        return start
    return {**start, "headers": [*headers, (b"date", formatdate(usegmt=True).encode())]}


def create_app(
    data_dir: str | Path,
    tokens: Mapping[str, User | Mapping[str, Any]] | TokenRegistry | None = None,
    *,
    admin_token: str | None = None,
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB,
    run_spaces: bool = False,
    space_build_args: Mapping[str, str] | None = None,
    space_wheelhouse: str | Path | None = None,
    run_jobs: bool = False,
) -> LocalHubApp:
    """Build a LocalHub ASGI app storing repos under ``data_dir``.

    Args:
        data_dir: Directory for bare repos and metadata; created if missing.
        tokens: ``token -> user``; defaults to new random tokens of the demo users
            (:func:`~.auth.generated_tokens`).
        admin_token: The token of the control routes (``app.context.admin_token``); a new
            random one by default.
        max_upload_mb: The largest body of an upload (a commit, a ``git push``, a request to a
            Space's app); 413 beyond it. Other bodies are bounded at 16 MB.
        run_spaces: Build and run Docker Spaces (needs a Docker engine; without one the
            runtime stays off and app URLs say why).
        space_build_args: Build arguments of Space images, e.g. ``{"BASE_IMAGE": ...}``.
        space_wheelhouse: A folder of wheels: the packages Space builds may install (builds
            have no network).
        run_jobs: Run Jobs (``HfApi.run_job``) as containers on the Docker engine, and serve
            their exposed ports.

    Example:
        Serve it with any ASGI server::

            uvicorn.run(create_app("/tmp/hub"), host="127.0.0.1", port=8765)
    """
    store = RepoStore(Path(data_dir))
    wheelhouse = Path(space_wheelhouse) if space_wheelhouse else None
    context = HubContext(
        store=store,
        tokens=token_registry(tokens),
        log=RequestLog(),
        admin_token=admin_token or generated_admin_token(),
        max_upload_bytes=int(max_upload_mb * (1 << 20)),
        spaces=SpaceRuntime(store, build_args=space_build_args, wheelhouse=wheelhouse)
        if run_spaces
        else None,
        jobs=JobRunner(store, build_args=space_build_args, wheelhouse=wheelhouse)
        if run_jobs
        else None,
    )
    return LocalHubApp(context)
