"""The catalog's server: the Gradio page at ``/``, ``/health``, and the same data as JSON.

Run it with ``uvicorn --factory openenv_catalog.app:create_app`` (the Space's Dockerfile does).

* ``GET /health``: ``{"status": "healthy"}`` once the server runs;
* ``GET /api/environments?search=&tag=&sort=&page=``: a page of the table;
* ``GET /api/environments/NS/NAME``: one environment with its manifest, schemas and latest
  validation report;
* ``POST /api/environments/NS/NAME/recheck``: validate it again, in the background (429 if it
  was re-checked less than ``CATALOG_RECHECK_S`` ago).

Behind a proxy that serves the app under a path (LocalHub serves Space apps at
``/_localhub/apps/NS/NAME``), an ``X-Forwarded-Prefix`` header tells the page where it lives.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from starlette.types import ASGIApp, Receive, Scope, Send

from openenv_hub.errors import (
    ConfigurationError,
    HubError,
    InvalidRepoIdError,
    SpaceNotFoundError,
)

from .catalog import Catalog
from .models import CatalogQuery
from .settings import CatalogSettings

__all__ = ["create_app"]


def create_app(catalog: Catalog | None = None) -> FastAPI:
    """The catalog app; its validations run while it is served.

    Args:
        catalog: What it shows (default: one configured by ``CATALOG_*`` variables).
    """
    import gradio as gr

    from openenv_hub.ui.theme import theme

    from .render import CSS
    from .ui import build_blocks

    catalog = catalog or Catalog(CatalogSettings.from_environment())

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        catalog.start()
        try:
            yield
        finally:
            catalog.stop()

    app = FastAPI(title="OpenEnv environments", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.catalog = catalog
    _add_routes(app, catalog)
    blocks = build_blocks(catalog)
    blocks.queue(default_concurrency_limit=8)
    options = {"theme": theme(), "css": CSS, "ssr_mode": False, "pwa": False, "mcp_server": False}
    gr.mount_gradio_app(app, blocks, path="/", **_accepted(gr.mount_gradio_app, options))
    app.add_middleware(ForwardedPrefix)
    return app


def _add_routes(app: FastAPI, catalog: Catalog) -> None:
    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/api/environments")
    def environments(
        search: str = "",
        tag: str = "",
        sort: str = "likes",
        page: int = Query(1, ge=1),
    ) -> dict[str, Any]:
        try:
            query = CatalogQuery(search, tag, sort, page)
        except ConfigurationError as exc:
            raise HTTPException(400, f"{exc.message} {exc.hint}") from None
        found = catalog.page(query)
        if found.error:
            raise HTTPException(502, found.error)
        return {
            "page": page,
            "has_next": found.has_next,
            "environments": [catalog.row_json(env) for env in found.environments],
        }

    @app.get("/api/environments/{namespace}/{name}")
    def environment(namespace: str, name: str) -> dict[str, Any]:
        return catalog.detail_json(_find(catalog, f"{namespace}/{name}"))

    @app.post("/api/environments/{namespace}/{name}/recheck")
    def recheck(namespace: str, name: str) -> dict[str, Any]:
        env = _find(catalog, f"{namespace}/{name}")
        wait_s = catalog.recheck([env]).get(env.repo_id)
        if wait_s:
            retry = str(math.ceil(wait_s))
            raise HTTPException(
                429,
                f"{env.repo_id} was re-checked recently; ask again in {retry} s (a Space is "
                "re-checked on request at most once per CATALOG_RECHECK_S).",
                headers={"Retry-After": retry},
            )
        return catalog.row_json(env)


def _find(catalog: Catalog, repo_id: str) -> Any:
    try:
        env = catalog.environment(repo_id)
    except (SpaceNotFoundError, InvalidRepoIdError) as exc:
        raise HTTPException(404, f"{exc.message} {exc.hint}".strip()) from None
    except HubError as exc:
        raise HTTPException(502, f"{exc.message} {exc.hint}".strip()) from None
    if env is None:
        raise HTTPException(404, f"{repo_id} is not tagged {catalog.settings.tags_text}.")
    return env


class ForwardedPrefix:
    """ASGI middleware: a proxy's ``X-Forwarded-Prefix`` becomes the request's ``root_path``, and
    the host of its ``Forwarded`` header (RFC 7239) the request's host, so the page's own links
    point where the client reaches the app."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = _as_forwarded(scope)
        await self.app(scope, receive, send)


def _as_forwarded(scope: Scope) -> Scope:
    headers = dict(scope["headers"])
    prefix = headers.get(b"x-forwarded-prefix", b"").decode("latin-1").rstrip("/")
    if not prefix.startswith("/"):
        return scope
    changed = {**scope, "root_path": prefix}
    fields = _forwarded_fields(headers.get(b"forwarded", b"").decode("latin-1"))
    if fields.get("host"):
        kept = [(k, v) for k, v in scope["headers"] if k != b"host"]
        changed["headers"] = [*kept, (b"host", fields["host"].encode("latin-1"))]
    if fields.get("proto") in ("http", "https"):
        changed["scheme"] = (
            fields["proto"] if scope["type"] == "http" else "ws" + fields["proto"][4:]
        )
    return changed


def _forwarded_fields(value: str) -> dict[str, str]:
    """``host`` and ``proto`` of the first element of a ``Forwarded`` header."""
    first = value.split(",", 1)[0]
    pairs = (part.strip().partition("=") for part in first.split(";"))
    return {key.lower(): raw.strip('"') for key, _, raw in pairs if key}


def _accepted(function: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The options ``function`` accepts (they vary between gradio releases)."""
    parameters = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in parameters}
