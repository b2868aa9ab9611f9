"""A Space's app on LocalHub, proxied to its container: at its own origin,
``http://NS--NAME.localhost:PORT/...`` (:mod:`openenv_hub.localhub.space_hosts`), for browsers,
and at ``/_localhub/apps/NS/NAME/...`` (what ``space_info().host`` gives), for clients.

Access is checked as the Hub API checks it, before anything else: a private Space's app answers
only callers who may read the Space, and to everyone else exactly what a missing Space answers
(404 ``RepoNotFound``; a WebSocket handshake is refused with 404), so neither its existence nor
its stage leaks. Callers send their token as the API takes it, ``Authorization: Bearer <token>``,
or as HTTP Basic ``user:token`` (what a client given ``http://user:token@host/...`` sends). A
browser sends neither unprompted, and LocalHub has no login page: private apps are for clients.
A token LocalHub knows is removed before the request reaches the app, so a Space's code never
sees a user's token; other credentials (an app's own API key) pass through.

Pages of different Spaces are different sites to a browser, as on the Hub, so that one Space's
page cannot drive another Space's app as its own. So a browser never gets a page at the path of
a Space on LocalHub's own origin, which every Space would share: a navigation there is
redirected (307) to the Space's own origin, any other request a browser sends there (it says
``Origin`` or ``Sec-Fetch-Site``) is refused with 403, and what the path answers is sandboxed
(``Content-Security-Policy: sandbox``) should a browser show it anyway. At its own origin the
app gets ``Host: NS--NAME.localhost:PORT``, the host its pages are served from (and a page's
``Origin``, which it checks): LocalHub passes no host of the caller's choosing on, in ``Host``
or in ``Forwarded``. At the path, ``X-Forwarded-Prefix`` tells the app where it is served.

HTTP requests are forwarded with their method, query, headers and body (streamed), and the
answer is streamed back; WebSocket connections are relayed frame by frame both ways, close codes
included (:mod:`openenv_hub.localhub.forwarding`). A Space with no running app answers 503,
saying why (the runtime is off, or the Space is not running), to a WebSocket handshake too
(where the server cannot answer a handshake over HTTP, it closes with 1013).

Layer: runtimes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from starlette.responses import RedirectResponse
from starlette.types import Receive, Scope, Send

from .auth import User, token_from_header
from .errors import HubError, error_response
from .forwarding import CLOSE_TRY_AGAIN_LATER, forward_http, relay_websocket, request_headers
from .routes.deps import open_repo
from .space_hosts import host_port, space_for_host, space_host, space_origin
from .storage import RepoKey

if TYPE_CHECKING:
    from .routes.deps import HubContext

__all__ = ["PREFIX", "AppRoute", "SpaceAppProxy", "match_app_path"]

PREFIX = "/_localhub/apps/"
_PATH = re.compile(r"^/_localhub/apps/(?P<ns>[^/]+)/(?P<name>[^/]+)(?P<rest>/.*)?$")
CLOSE_POLICY_VIOLATION = 1008
_DOCUMENTS = {"document", "iframe", "frame", "object", "embed"}
_SANDBOXED = ((b"content-security-policy", b"sandbox"),)


def match_app_path(path: str) -> tuple[RepoKey, str] | None:
    """``(Space, path inside its app)`` for an app URL path, else None."""
    found = _PATH.match(path)
    if found is None:
        return None
    return RepoKey("space", found["ns"], found["name"]), found["rest"] or "/"


@dataclass(frozen=True)
class AppRoute:
    """Which Space's app a request is for, the path inside the app, and the port and whether
    the request came to the app's own origin (``by_host``) or to its path on LocalHub."""

    key: RepoKey
    rest: str
    port: int | None
    by_host: bool

    @classmethod
    def of(cls, scope: Scope, context: HubContext) -> AppRoute | None:
        """The route of ``scope``, or None if it is not a request to a Space's app."""
        host = _header(scope, b"host") or ""
        server = scope.get("server")
        port = host_port(host) or (server[1] if server else None)
        key = space_for_host(host, context.store)
        if key is not None:
            return cls(key, scope["path"], port, by_host=True)
        matched = match_app_path(scope["path"])
        return cls(matched[0], matched[1], port, by_host=False) if matched else None

    @property
    def origin(self) -> str:
        return space_origin(self.key, self.port)

    @property
    def host(self) -> str:
        """The ``Host`` the app is asked for at its own origin."""
        return space_host(self.key) + (f":{self.port}" if self.port else "")


class SpaceAppProxy:
    """ASGI app forwarding app URLs to the Space runtime's containers."""

    def __init__(self, context: HubContext) -> None:
        self.context = context
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = AppRoute.of(scope, self.context)
        user, headers = self._caller(scope)
        upstream = self._upstream(route, user, scope)
        if not isinstance(upstream, str):
            if scope["type"] == "http":
                await _answer(upstream, scope, receive, send)
            else:
                await _refuse_websocket(upstream, scope, receive, send)
            return
        assert route is not None  # an app's URL comes with its route
        if scope["type"] == "http":
            await self._http(upstream, route, {**scope, "headers": headers}, receive, send)
        else:
            host, origin = (
                (route.host, _header(scope, b"origin")) if route.by_host else (None, None)
            )
            await relay_websocket(
                upstream, route.rest, scope, receive, send, host=host, origin=origin
            )

    def _caller(self, scope: Scope) -> tuple[User | None, list[tuple[bytes, bytes]]]:
        """The LocalHub user whose token the request carries, if any, and the headers to
        forward: without that token."""
        headers = list(scope["headers"])
        for name, value in headers:
            if name == b"authorization":
                token = token_from_header(value.decode("latin-1"))
                user = self.context.tokens.user_for(token) if token else None
                if user is not None:
                    return user, [(n, v) for n, v in headers if n != b"authorization"]
        return None, headers

    def _upstream(
        self, route: AppRoute | None, user: User | None, scope: Scope
    ) -> str | HubError | RedirectResponse:
        """The app's base URL, or the error (or, for a browser at the app's path, the redirect
        to its own origin) that answers instead."""
        if route is None:
            return HubError(404, "Not a Space app URL: use /_localhub/apps/NS/NAME/...")
        key = route.key
        try:
            open_repo(self.context, key, user, write=False)  # 404 for what the caller may not see
        except HubError as error:
            return error
        if not route.by_host:
            elsewhere = _browser_at_the_path(route, scope)
            if elsewhere is not None:
                return elsewhere
        runtime = self.context.spaces
        if runtime is None:
            return HubError(
                503,
                f"LocalHub does not run Space apps ({key.repo_id}): its Space runtime is off. "
                "Start LocalHub with run_spaces=True (a Docker engine is needed), or start the "
                "app yourself and register its URL with LocalHub.set_space_runtime(repo_id, host=...).",
            )
        if not runtime.enabled:
            return HubError(
                503,
                f"LocalHub cannot run Space apps ({key.repo_id}): it runs them in Docker, and "
                f"{runtime.unavailable}. Start LocalHub where a Docker engine answers, or start "
                "the app yourself and register its URL with LocalHub.set_space_runtime(...).",
            )
        url = runtime.app_url(key)
        if url is None:
            stage = self.context.store.read_meta(key).stage
            return HubError(503, f"Space {key.repo_id} has no running app (stage {stage}).")
        return url

    async def _http(
        self, upstream: str, route: AppRoute, scope: Scope, receive: Receive, send: Send
    ) -> None:
        if self._client is None:
            self._client = httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(300.0))
        headers = request_headers(scope)
        if route.by_host:
            headers.append(("host", route.host))
            answer: tuple[tuple[bytes, bytes], ...] = ()
        else:
            headers.append(("x-forwarded-prefix", f"{PREFIX}{route.key.repo_id}"))
            answer = _SANDBOXED
        await forward_http(
            self._client, upstream + route.rest, headers, scope, receive, send,
            answer_headers=answer,
        )  # fmt: skip

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _browser_at_the_path(route: AppRoute, scope: Scope) -> HubError | RedirectResponse | None:
    """For a browser's request to a Space's path on LocalHub: the redirect of a navigation to
    the app's own origin, or the refusal of anything else; None for other clients."""
    fetch_mode = _header(scope, b"sec-fetch-mode")
    document = _header(scope, b"sec-fetch-dest") in _DOCUMENTS
    reading = "text/html" in (_header(scope, b"accept") or "") and fetch_mode is None
    navigation = fetch_mode == "navigate" or document or reading
    if navigation and scope["type"] == "http" and scope["method"] in ("GET", "HEAD"):
        query = scope.get("query_string", b"").decode("latin-1")
        location = route.origin + route.rest + (f"?{query}" if query else "")
        return RedirectResponse(location, status_code=307)
    if _header(scope, b"origin") is None and _header(scope, b"sec-fetch-site") is None:
        return None
    return HubError(
        403,
        f"Pages reach the app of Space {route.key.repo_id} at its own origin, {route.origin}, "
        f"as on the Hub (NS-NAME.hf.space), not at its path on LocalHub, which every Space "
        "shares. Open the app there; clients that are not browsers may use either.",
    )


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _answer(
    answer: HubError | RedirectResponse, scope: Scope, receive: Receive, send: Send
) -> None:
    response = error_response(answer) if isinstance(answer, HubError) else answer
    await response(scope, receive, send)


async def _refuse_websocket(
    error: HubError | RedirectResponse, scope: Scope, receive: Receive, send: Send
) -> None:
    """Refuse a handshake with the error's status and explanation, as HTTP answers it, where
    the server can send an HTTP answer; else an app that is not running closes with 1013 ("try
    again later") and anything else with 1008."""
    await receive()  # websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        response = error_response(error) if isinstance(error, HubError) else error
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()]
        start = {"type": "websocket.http.response.start", "status": response.status_code}
        await send({**start, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": response.body})
    elif isinstance(error, HubError) and error.status == 503:
        await send({"type": "websocket.close", "code": CLOSE_TRY_AGAIN_LATER})
    else:
        await send({"type": "websocket.close", "code": CLOSE_POLICY_VIOLATION})
