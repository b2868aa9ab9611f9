"""What a server answers at the URLs people try first: ``GET /`` without the web UI says where
things are (instead of a bare 404), and a WebSocket opened under the web UI's path
(``/web/ws``, ``/web/mcp``: a client given ``.../web`` as its base URL) is refused with a 404
that says to drop ``/web``.

Layer: server.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, WebSocket
from starlette.responses import JSONResponse

__all__ = ["UI_PATH", "add_index", "serves_web_ui"]

UI_PATH = "/web"
CLOSE_POLICY_VIOLATION = 1008


def add_index(app: FastAPI, *, name: str, web: bool) -> None:
    """``GET /`` naming the server's routes (unless the web UI, which answers ``/`` itself, is
    on), and the refusal of sockets opened under ``/web``. Call before the UI is mounted."""
    if not web:

        async def index() -> dict[str, Any]:
            return {
                "name": name,
                "health": "/health",
                "docs": "/docs",
                "schema": "/schema",
                "websocket": "/ws",
                "mcp": "/mcp",
                "web": "off: start the server with --web (ENABLE_WEB_INTERFACE=true, or "
                "create_app(web=True)) for the web UI at /web",
            }

        app.add_api_route("/", index, methods=["GET"], include_in_schema=False)

    for socket in ("ws", "mcp"):

        async def misplaced(websocket: WebSocket, socket: str = socket) -> None:
            message = (
                f"/web is the web UI, not the environment: the environment's WebSocket is "
                f"/{socket} at the server's root (drop /web from the client's base URL)"
            )
            if "websocket.http.response" in websocket.scope.get("extensions", {}):
                await websocket.send_denial_response(
                    JSONResponse({"detail": message}, status_code=404)
                )
            else:
                await websocket.close(code=CLOSE_POLICY_VIOLATION, reason=message[:120])

        app.add_api_websocket_route(f"{UI_PATH}/{socket}", misplaced)


def serves_web_ui(app: Any) -> bool:
    """Whether ``app`` serves a web UI at ``/web`` (mounted, or being built)."""
    routes = getattr(getattr(app, "router", None), "routes", None) or []
    return any(getattr(route, "path", None) == UI_PATH for route in routes)
