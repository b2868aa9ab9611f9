"""The local Daytona's ASGI app: the API and toolbox routes (:mod:`.routes`) and, under
``/preview/``, the token-checked preview proxy (:mod:`.preview`).

Layer: runtimes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from .preview import PREFIX, PreviewProxy
from .routes import Service, api_routes
from .sandboxes import Sandboxes

__all__ = ["LocalDaytonaApp", "create_app"]


class LocalDaytonaApp:
    """The API (a Starlette app) and the preview proxy, side by side."""

    def __init__(self, sandboxes: Sandboxes, api_key: str) -> None:
        self.sandboxes = sandboxes
        self.preview = PreviewProxy(sandboxes, api_key)
        self.service = Service(sandboxes, self.preview, api_key)

        @asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            yield
            await self.preview.aclose()

        self.api = Starlette(routes=api_routes(self.service), lifespan=lifespan)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope["path"].startswith(PREFIX):
            await self.preview(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def create_app(sandboxes: Sandboxes, api_key: str) -> LocalDaytonaApp:
    """The app serving ``sandboxes`` to holders of ``api_key``."""
    return LocalDaytonaApp(sandboxes, api_key)
