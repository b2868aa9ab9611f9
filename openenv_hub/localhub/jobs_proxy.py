"""A Job's exposed port on LocalHub, ``/_localhub/expose/<job_id>--<port>/...``, proxied to its
container (HTTP and WebSocket), as the Hub's jobs proxy serves ``https://<job_id>--<port>.hf.jobs``.

A port in ``expose`` needs ``Authorization: Bearer <token>`` of a user with read access to the
Job's namespace: without a token the answer is 401, with another user's token 403 (a WebSocket
handshake is refused with the same status). Ports in ``expose_public`` need none. The token is
not passed on to the Job's server. A Job that is not running, or a port it does not expose,
answers 503 or 404 saying which.

Layer: runtimes.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import httpx
from starlette.types import Receive, Scope, Send

from .errors import HubError, error_response
from .forwarding import forward_http, relay_websocket, request_headers

if TYPE_CHECKING:
    from .jobs import Job
    from .routes.deps import HubContext

__all__ = ["PREFIX", "JobExposeProxy", "expose_path"]

PREFIX = "/_localhub/expose/"
_PATH = re.compile(r"^/_localhub/expose/(?P<job>[0-9a-f]+)--(?P<port>\d+)(?P<rest>/.*)?$")
_POLICY_VIOLATION = 1008


def expose_path(job_id: str, port: int) -> str:
    """The path of a Job's exposed port on LocalHub."""
    return f"{PREFIX}{job_id}--{port}"


class JobExposeProxy:
    """ASGI app forwarding exposed ports to the Jobs' containers, checking tokens first."""

    def __init__(self, context: HubContext) -> None:
        self.context = context
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            upstream, rest = self._upstream(scope)
        except HubError as refused:
            await _refuse(refused, scope, receive, send)
            return
        if scope["type"] == "websocket":
            await relay_websocket(upstream, rest, scope, receive, send)
            return
        if self._client is None:
            self._client = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(300.0))
        headers = request_headers(scope, drop=frozenset({"authorization"}))
        await forward_http(self._client, upstream + rest, headers, scope, receive, send)

    def _upstream(self, scope: Scope) -> tuple[str, str]:
        """The container's URL and the path in it, once the caller may use the port.

        Raises:
            HubError: 404 (no such Job or port), 401/403 (token), 503 (not running).
        """
        found = _PATH.match(scope["path"])
        runner = self.context.jobs
        job = runner.find(found["job"]) if found and runner is not None else None
        if found is None or job is None or runner is None:
            raise HubError(404, "Not an exposed port of a Job: use /_localhub/expose/ID--PORT/...")
        port = int(found["port"])
        if port not in job.spec.ports:
            raise HubError(404, f"Job {job.id} does not expose port {port}.")
        if port not in job.spec.ports_public:
            self._check_access(job, scope)
        upstream = runner.upstream(job, port)
        if upstream is None:
            raise HubError(503, f"Job {job.id} is not running (stage {job.stage}).")
        return upstream, found["rest"] or "/"

    def _check_access(self, job: Job, scope: Scope) -> None:
        authorization = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k == b"authorization"), None
        )
        user = self.context.tokens.authenticate(authorization)  # 401 for an unknown token
        if user is None:
            raise HubError.unauthorized(
                f"Port of Job {job.id} is private: send 'Authorization: Bearer <token>' with a "
                f"token that can read {job.namespace!r}."
            )
        if not user.can_see(job.namespace):
            raise HubError.forbidden(
                f"The token of {user.name!r} has no read access to {job.namespace!r}, whose "
                f"Job {job.id} this is."
            )

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


async def _refuse(error: HubError, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``error``: as HTTP, or as the refused WebSocket handshake's HTTP answer."""
    if scope["type"] == "http":
        await error_response(error)(scope, receive, send)
        return
    await receive()  # websocket.connect
    if "websocket.http.response" in (scope.get("extensions") or {}):
        response = error_response(error)
        await send(
            {
                "type": "websocket.http.response.start",
                "status": error.status,
                "headers": response.raw_headers,
            }
        )
        await send({"type": "websocket.http.response.body", "body": response.body})
        return
    await send({"type": "websocket.close", "code": _POLICY_VIOLATION})
