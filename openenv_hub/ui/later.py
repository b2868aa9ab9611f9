"""The web UI, mounted once it is built, so that it never delays the server's start.

Importing gradio and building the UI takes seconds. :func:`mount_ui_when_ready` lets the server
start at once, serving ``/health``, ``/ws`` and the API, and builds the UI on a helper thread
meanwhile; until it is mounted, ``/web`` answers 503 with a page that says it is loading (and
reloads itself). A UI that fails to build says why there, and in the log.

Layer: ui.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import importlib.util
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount

from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.ui.mount import UI_PATH, PreparedUI, prepare_ui

if TYPE_CHECKING:
    from fastapi import FastAPI

    from openenv_hub.server.sessions import SessionPool

__all__ = ["mount_ui_when_ready"]

logger = logging.getLogger("openenv_hub.ui")

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta http-equiv="refresh" content="{refresh}"></head>
<body style="font-family: sans-serif; margin: 3rem"><h1>{title}</h1><p>{text}</p></body></html>
"""


class _LaterUI:
    """The placeholder at ``path`` until the UI is built, then the UI itself."""

    def __init__(self, app: FastAPI, path: str, build: Callable[[], PreparedUI]) -> None:
        self.app, self.path, self.build = app, path, build
        self.prepared: PreparedUI | None = None
        self.failure: str | None = None
        self.ready = threading.Event()
        self.placeholders: list[BaseRoute] = []
        self.gradio_lifespan: asyncio.Task[None] | None = None
        self.stopping = asyncio.Event()

    def add_placeholders(self) -> None:
        before = len(self.app.router.routes)
        for route in (self.path, self.path + "/{rest:path}"):
            self.app.add_route(route, self.placeholder, methods=["GET", "HEAD", "POST"])
        self.placeholders = self.app.router.routes[before:]

    async def placeholder(self, request: Request) -> Response:
        if self.failure is not None:
            text = f"The web UI could not be built: {html.escape(self.failure)}"
            page = _PAGE.format(title="Web UI unavailable", refresh=3600, text=text)
            return HTMLResponse(page, status_code=500)
        text = "The environment is running; its web UI is loading. This page reloads itself."
        page = _PAGE.format(title="Loading the web UI\u2026", refresh=1, text=text)
        return HTMLResponse(page, status_code=503, headers={"Retry-After": "1"})

    def start_building(self) -> None:
        loop = asyncio.get_running_loop()

        def build() -> None:
            try:
                # Inside a loop of its own, which gradio then uses instead of making (and never
                # closing) one.
                prepared = asyncio.run(_called(self.build))
            except Exception as exc:
                logger.exception("The web UI could not be built")
                self.failure = f"{type(exc).__name__}: {exc}"
                self.ready.set()
                return
            with contextlib.suppress(RuntimeError):  # the server stopped meanwhile
                loop.call_soon_threadsafe(self.mount, prepared)

        threading.Thread(target=build, name="openenv-ui-build", daemon=True).start()

    def mount(self, prepared: PreparedUI) -> None:
        """On the event loop: swap the placeholders for the UI and run gradio's startup."""
        self.prepared = prepared
        for route in self.placeholders:
            self.app.router.routes.remove(route)
        before = len(self.app.router.routes)
        prepared.mount()
        (mounted,) = [r for r in self.app.router.routes[before:] if isinstance(r, Mount)]
        self.gradio_lifespan = asyncio.ensure_future(self._run_gradio(mounted.app))

    async def _run_gradio(self, gradio_app: Any) -> None:
        """What ``gr.mount_gradio_app`` asks of the parent's lifespan, run now it is mounted."""
        try:
            async with gradio_app.router.lifespan_context(gradio_app):
                gradio_app.get_blocks().run_startup_events()
                await gradio_app.get_blocks().run_extra_startup_events()
                self.ready.set()
                await self.stopping.wait()
        finally:
            self.ready.set()

    async def stop(self) -> None:
        self.stopping.set()
        if self.gradio_lifespan is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.gradio_lifespan, 5.0)
        if self.prepared is not None:
            self.prepared.tabs.cleanup()


async def _called(fn: Callable[[], PreparedUI]) -> PreparedUI:
    return fn()


def mount_ui_when_ready(
    app: FastAPI, pool: SessionPool, *, path: str = UI_PATH, **ui_options: Any
) -> None:
    """Serve ``path`` from the app's start: a loading page, then the UI once it is built; ``/``
    redirects there.

    ``ui_options`` are :func:`openenv_hub.ui.mount_ui`'s. Raises
    :class:`~openenv_hub.errors.DependencyNotInstalledError` at once when gradio is missing.
    """
    if importlib.util.find_spec("gradio") is None:
        raise DependencyNotInstalledError("gradio", "ui", feature="The web UI")
    later = _LaterUI(app, path, lambda: prepare_ui(app, pool, path=path, **ui_options))
    later.add_placeholders()
    previous = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        async with previous(target) as state:
            later.stopping = asyncio.Event()  # bound to the server's loop
            later.start_building()
            try:
                yield state
            finally:
                await later.stop()

    app.router.lifespan_context = lifespan
    app.state.web_ui_ready = later.ready

    async def to_web_ui() -> RedirectResponse:
        return RedirectResponse(f"{path}/")

    app.add_api_route("/", to_web_ui, include_in_schema=False)
