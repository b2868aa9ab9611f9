"""What a web page of another site may ask of the server: nothing, unless allowed.

Any page a browser shows can send requests to a server on its user's machine: open
``ws://127.0.0.1:8000/ws``, ``POST /mcp`` as ``text/plain`` (a CORS "simple request", sent
without asking first), or reach the server under a name of its own through DNS rebinding.
:class:`BrowserGuard`, an ASGI middleware in front of every route (HTTP and WebSocket, the web UI
included), refuses:

- a request whose ``Origin`` is neither the server's own (the host and port it was asked for:
  its ``Host``, or the host a proxy names in ``Forwarded`` / ``X-Forwarded-Host``) nor an
  allowed one (``allowed_origins``, ``$OPENENV_ALLOWED_ORIGINS``; on a Space, its own
  ``https://NS-NAME.hf.space``). ``Origin: null`` (sandboxed frames, ``file:`` pages) is never
  the server's own;
- a request without ``Origin`` that the browser marks ``Sec-Fetch-Site: cross-site``, unless it
  is a navigation (following a link to the UI works);
- a request whose ``Host`` is none of the names the server may be reached by: a loopback name
  (``localhost``, ``*.localhost``, with any port), an IP address (``127.0.0.1``, ``[::1]``,
  ``10.0.0.5``: what a client that typed ``http://10.0.0.5:8000`` sends), or an allowed host
  (``allowed_hosts``, ``$OPENENV_ALLOWED_HOSTS``, the Space's host); and, in process, the
  name an ASGI test client calls the app by (Starlette's ``TestClient`` sends
  ``Host: testserver``), which a network server never serves (its server address is always
  an address or a socket path, never a name). A page that rebound its
  own name to the server's address (DNS rebinding) sends its own name, whichever address it
  reached: loopback, the machine's own on a server bound to ``0.0.0.0``, or a container's
  behind a published port. An address is never such a name: a page whose origin is an address
  is served from that address, the server's own or another's (whose origin the ``Origin``
  check refuses), so every address is answered, whatever address the connection arrived at
  (behind a load balancer, a NAT or a port published on another address, the one the client
  typed is not the server's);
- a body sent to the API (every route but the UI's, whose uploads are forms) that is not
  ``application/json``.

The host a proxy names in ``Forwarded`` / ``X-Forwarded-Host`` counts as the server's own only
when the connection comes from a trusted proxy (``trusted_proxies``,
``$OPENENV_TRUSTED_PROXIES``; none by default): anyone else could name any host there.
Every answer says where it may be framed (``Content-Security-Policy: frame-ancestors``): by the
server's own pages and the allowed origins, and on a Space by ``https://huggingface.co``, whose
Space page shows the app in a frame; where that is the server alone, ``X-Frame-Options: DENY``
says it to browsers that do not read the policy. A page of another site cannot show the UI in a
frame of its own and have its user click in it.

Refusals are 403 (415 for the body) with a JSON body naming what was refused and the setting
that allows it; a WebSocket is refused at the handshake, with 403. Clients that send no
``Origin`` (Python clients, TRL, ``curl``) are unaffected. Pages of an allowed origin also get
CORS headers, so they can read the answers (:func:`add_browser_guard`).

Layer: server.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import pydantic_core
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import openenv_hub.server.settings as settings
from openenv_hub.server.proxies import TrustedProxies

__all__ = ["SPACE_PAGES", "BrowserGuard", "BrowserPolicy", "Refusal", "add_browser_guard"]

logger = logging.getLogger("openenv_hub.server")

UI_PREFIX = "/web"  # the UI's own requests (gradio: forms, uploads) may carry any body
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_DEFAULT_PORTS = {"http": ":80", "https": ":443", "ws": ":80", "wss": ":443"}
SPACE_PAGES = "https://huggingface.co"  # shows a Space's app in a frame of its Space page


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: its HTTP status and JSON body."""

    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class BrowserPolicy:
    """The origins and hosts a server accepts besides its own and the loopback names.

    Attributes:
        origins: Allowed origins, as ``scheme://host[:port]``; ``"*"`` allows any.
        hosts: Host names allowed besides the loopback names and the server's own address
            (``.example.com``: that name and every name under it); ``"*"`` allows any.
        proxies: Trusted proxies: only theirs are the hosts named by ``Forwarded`` /
            ``X-Forwarded-Host``.
        frame_ancestors: Origins whose pages may show the server's in a frame, besides its own
            (a Space's: ``https://huggingface.co``).
    """

    origins: frozenset[str] = frozenset()
    hosts: frozenset[str] = frozenset()
    proxies: TrustedProxies = field(default_factory=TrustedProxies)
    frame_ancestors: tuple[str, ...] = ()

    @classmethod
    def from_settings(
        cls,
        allowed_origins: Sequence[str] | None = None,
        allowed_hosts: Sequence[str] | None = None,
        trusted_proxies: Sequence[str] | None = None,
    ) -> BrowserPolicy:
        """The arguments, else ``$OPENENV_ALLOWED_ORIGINS`` / ``$OPENENV_ALLOWED_HOSTS`` /
        ``$OPENENV_TRUSTED_PROXIES``; plus the Space's own origin and host, and the Hub's
        Space page as a frame of the UI, when the server runs on a Space."""
        origins = set(settings.allowed_origins(allowed_origins))
        hosts = set(settings.allowed_hosts(allowed_hosts))
        framing = set(origins)
        space = settings.space_host()
        if space:
            origins.add(f"https://{space}")
            hosts.add(space)
            framing.add(SPACE_PAGES)
        proxies = TrustedProxies.from_settings(trusted_proxies)
        return cls(frozenset(origins), frozenset(hosts), proxies, tuple(sorted(framing)))

    def refusal(self, scope: Scope) -> Refusal | None:
        """Why the request of ``scope`` is refused, or None to serve it."""
        headers = _headers(scope)
        return (
            self._host_refusal(scope, headers)
            or self._origin_refusal(scope, headers)
            or _body_refusal(scope, headers)
        )

    def answers(self, host: str) -> bool:
        """Whether the server answers the name ``host`` (lowercase, without its port)."""
        if "*" in self.hosts or _is_loopback_name(host) or _is_address(host):
            return True
        if host in self.hosts:
            return True
        domains = (entry for entry in self.hosts if entry.startswith("."))
        return any(host.endswith(domain) or host == domain[1:] for domain in domains)

    def frame_headers(self) -> list[tuple[bytes, bytes]]:
        """The headers saying who may show the server's pages in a frame."""
        if "*" in self.frame_ancestors:
            return []
        ancestors = " ".join(("'self'", *self.frame_ancestors))
        policy = [(b"content-security-policy", f"frame-ancestors {ancestors}".encode())]
        return policy if self.frame_ancestors else [(b"x-frame-options", b"DENY"), *policy]

    def _host_refusal(self, scope: Scope, headers: dict[bytes, str]) -> Refusal | None:
        host = _hostname(headers.get(b"host", ""))
        if host is None or self.answers(host) or host == _in_process_name(scope):
            return None
        return Refusal(
            403,
            {
                "detail": f"Host {host!r} refused: this server answers only the names it may be "
                "reached by (localhost, IP addresses such as 127.0.0.1, and the allowed hosts), "
                "so that a web page cannot reach it under a name of its own (DNS rebinding). To "
                "serve this name, add it to allowed_hosts in create_app, or to "
                "OPENENV_ALLOWED_HOSTS (.example.com allows every name under example.com).",
                "code": "HOST_NOT_ALLOWED",
                "host": host,
            },
        )

    def _origin_refusal(self, scope: Scope, headers: dict[bytes, str]) -> Refusal | None:
        origin = headers.get(b"origin")
        if origin is None:
            cross_site = headers.get(b"sec-fetch-site") == "cross-site"
            if cross_site and headers.get(b"sec-fetch-mode") != "navigate":
                return _cross_origin("a page of another site", "")
            return None
        if "*" in self.origins:
            return None
        normalised = origin.strip().rstrip("/").lower()
        proxied = self.proxies.trust(scope)
        if normalised in self.origins or _is_own(normalised, headers, proxied=proxied):
            return None
        return _cross_origin(repr(origin), origin)


class BrowserGuard:
    """ASGI middleware refusing the requests :class:`BrowserPolicy` refuses (see the module's
    docstring), on ``http`` and ``websocket`` connections."""

    def __init__(self, app: ASGIApp, *, policy: BrowserPolicy) -> None:
        self.app = app
        self.policy = policy
        self.frame_headers = policy.frame_headers()  # the same for every answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.policy.refusal(scope)
        if refused is None and scope["type"] == "http":
            await self.app(scope, receive, _with_headers(send, self.frame_headers))
            return
        if refused is None:
            await self.app(scope, receive, send)
            return
        level = logging.WARNING if refused.status == 403 else logging.INFO  # 415: a mistake
        kind = "WebSocket" if scope["type"] == "websocket" else scope["method"]
        logger.log(level, "Refused %s %s: %s", kind, scope["path"], refused.body["detail"])
        if scope["type"] == "websocket":
            await _refuse_handshake(scope, receive, send, refused)
        else:
            await _respond(send, "http.response", refused)


def add_browser_guard(app: Any, policy: BrowserPolicy) -> None:
    """Put :class:`BrowserGuard` in front of ``app`` (a Starlette or FastAPI app, after its
    other middleware), and answer pages of allowed origins with CORS headers."""
    allowed = sorted(policy.origins)
    if allowed:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=allowed,
            allow_methods=["GET", "POST"],
            allow_headers=["content-type", "x-openenv-session"],
        )
    app.add_middleware(BrowserGuard, policy=policy)


def _cross_origin(who: str, origin: str) -> Refusal:
    return Refusal(
        403,
        {
            "detail": f"Cross-origin request refused: {who} may not call this server. Pages "
            "served by the server itself may, and so may the origins it allows: add the "
            "origin (scheme://host:port) to allowed_origins in create_app, or to "
            "OPENENV_ALLOWED_ORIGINS.",
            "code": "ORIGIN_NOT_ALLOWED",
            "origin": origin or None,
        },
    )


def _body_refusal(scope: Scope, headers: dict[bytes, str]) -> Refusal | None:
    if scope["type"] != "http" or scope["method"] not in _BODY_METHODS:
        return None
    path: str = scope["path"]
    if path == UI_PREFIX or path.startswith(UI_PREFIX + "/"):
        return None
    kind = headers.get(b"content-type")
    has_body = headers.get(b"content-length", "0").strip() not in ("0", "")
    has_body = has_body or b"transfer-encoding" in headers
    if kind is None and not has_body:
        return None
    media = (kind or "").split(";", 1)[0].strip().lower()
    if media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    ):
        return None
    shown = f"Content-Type {kind!r}" if kind is not None else "no Content-Type"
    return Refusal(
        415,
        {
            "detail": f"{scope['method']} {path} with {shown}: the server reads JSON bodies "
            "only. Send the body with Content-Type: application/json (curl: --json, or "
            "-H 'Content-Type: application/json').",
            "code": "UNSUPPORTED_MEDIA_TYPE",
        },
    )


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    """``send``, adding ``extra`` to the response's headers."""
    if not extra:
        return send

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *extra]}
        await send(message)

    return sending


def _headers(scope: Scope) -> dict[bytes, str]:
    """The request's headers by lowercase name (the first of repeated ones)."""
    found: dict[bytes, str] = {}
    for name, value in scope.get("headers", ()):
        found.setdefault(name.lower(), value.decode("latin-1"))
    return found


def _in_process_name(scope: Scope) -> str | None:
    """The name the app was called by when the connection is in process (an ASGI test
    client's base URL: its "server" is that name, where a network server's is its socket's
    address), else None."""
    server = scope.get("server")
    if not server or not isinstance(server[0], str):
        return None
    name = server[0].lower()
    if _is_address(name) or name.startswith("/") or not name:
        return None
    return name


@functools.lru_cache(maxsize=256)
def _is_address(host: str) -> bool:
    """Whether ``host`` is an IP address (``10.0.0.5``, ``[::1]``), not a name (remembered for
    the last names asked about: a server is asked by a few, each request)."""
    try:
        ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    return True


def _is_loopback_name(host: str) -> bool:
    return host == "localhost" or host.endswith(".localhost")


def _hostname(host: str) -> str | None:
    """The name in a ``Host`` value (``[::1]`` keeps its brackets), lowercase; None if empty."""
    host = host.strip().lower()
    if not host:
        return None
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0].rstrip(".") if host.count(":") == 1 else host.rstrip(".")


def _is_own(origin: str, headers: dict[bytes, str], *, proxied: bool) -> bool:
    """Whether ``origin`` names the host and port the request was sent to (or, from a trusted
    proxy, the one it names)."""
    parts = urlsplit(origin)
    if not parts.scheme or not parts.netloc or origin == "null":
        return False
    wanted = _without_default_port(parts.netloc, parts.scheme)
    asked = [headers.get(b"host", "")]
    if proxied:
        asked.append(_forwarded_host(headers.get(b"forwarded", "")))
        asked.append(headers.get(b"x-forwarded-host", "").split(",", 1)[0])
    return any(
        value and _without_default_port(value.strip().lower(), parts.scheme) == wanted
        for value in asked
    )


def _without_default_port(netloc: str, scheme: str) -> str:
    return netloc.removesuffix(_DEFAULT_PORTS.get(scheme, "\0"))


def _forwarded_host(value: str) -> str:
    """The ``host`` of the first element of a ``Forwarded`` header (RFC 7239)."""
    first = value.split(",", 1)[0]
    for part in first.split(";"):
        key, _, raw = part.strip().partition("=")
        if key.lower() == "host":
            return raw.strip('"')
    return ""


async def _refuse_handshake(scope: Scope, receive: Receive, send: Send, refused: Refusal) -> None:
    """Refuse a WebSocket upgrade with the refusal's status and body (or a bare 403 where the
    server cannot send a body)."""
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    if "websocket.http.response" in scope.get("extensions", {}):
        await _respond(send, "websocket.http.response", refused)
    else:
        await send({"type": "websocket.close", "code": 1008})


async def _respond(send: Send, kind: str, refused: Refusal) -> None:
    body = pydantic_core.to_json(refused.body)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": f"{kind}.start", "status": refused.status, "headers": headers})
    await send({"type": f"{kind}.body", "body": body})
