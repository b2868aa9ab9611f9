"""``create_app``: an environment as a FastAPI app, and ``run`` to serve it with uvicorn."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse, RedirectResponse

from openenv_hub.errors import (
    ConfigurationError,
    EnvironmentExecutionError,
    EnvironmentFactoryError,
    ServerReplyError,
    SessionCapacityError,
    SessionError,
    SessionNotFoundError,
)
from openenv_hub.server.http import build_router
from openenv_hub.server.sessions import DEFAULT_IDLE_TIMEOUT_S, EnvFactory, SessionPool
from openenv_hub.server.tasks import build_task_router
from openenv_hub.server.websocket import serve_mcp_socket, serve_ws
from openenv_hub.types import Action, Observation, State

__all__ = ["create_app", "run", "uvicorn_options", "web_enabled_by_env"]

logger = logging.getLogger("openenv_hub.server")

_TRUE = {"1", "true", "yes", "on"}


def web_enabled_by_env() -> bool:
    """Whether ``ENABLE_WEB_INTERFACE`` asks for the web UI."""
    return os.environ.get("ENABLE_WEB_INTERFACE", "").strip().lower() in _TRUE


def create_app(
    env_factory: EnvFactory,
    action_cls: type[Action] = Action,
    observation_cls: type[Observation] = Observation,
    *,
    state_cls: type[State] = State,
    reset_observation_cls: type[Observation] | None = None,
    env_name: str | None = None,
    mode: str | None = None,
    max_concurrent_envs: int | None = None,
    session_idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    web: bool | None = None,
    readme: str | None = None,
    ui_builder: Callable[..., Any] | None = None,
    show_default_ui: bool = True,
    trajectories: str | os.PathLike[str] | None = None,
) -> FastAPI:
    """Serve an environment over HTTP, ``/ws`` and ``/mcp`` (and the web UI at ``/web``).

    Args:
        env_factory: The environment class, or a function returning a new instance.
        action_cls: Action model that ``step`` payloads are validated against.
        observation_cls: Observation model, published by ``/schema``.
        state_cls: State model, published by ``/schema``.
        reset_observation_cls: Observation model of ``reset`` when it differs from ``step``'s.
        env_name: Name shown by ``/metadata`` and the UI (default: the environment's own).
        mode: ``"simulation"`` (default, or ``$OPENENV_MODE``) serves HTTP reset/step/state;
            ``"production"`` leaves them out, so agents reach the environment through MCP only.
        max_concurrent_envs: Sessions allowed at once. Default ``$MAX_CONCURRENT_ENVS`` or 64.
        session_idle_timeout_s: Close sessions idle this long; ``None`` keeps them forever.
        web: Mount the Gradio debugging UI at ``/web``. Default: ``$ENABLE_WEB_INTERFACE``.
        readme: Markdown shown in the UI's README tab (default: ``README.md`` next to the app).
        ui_builder: Function ``(context) -> gradio.Blocks`` adding a custom UI tab.
        show_default_ui: Set False to show only the custom tab.
        trajectories: Record every session's episodes to this ``.jsonl`` or ``.parquet`` file
            (see :mod:`openenv_hub.trajectories`); it is complete when the server stops.
    """
    pool = SessionPool(
        env_factory,
        action_cls=action_cls,
        max_sessions=max_concurrent_envs,
        idle_timeout_s=session_idle_timeout_s,
        env_name=env_name,
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        recorder = await _start_recording(pool, trajectories) if trajectories else None
        yield
        await pool.aclose()
        if recorder is not None:
            recorder.close()

    app = FastAPI(
        title="OpenEnv Environment HTTP API",
        version="1.0.0",
        description=f"Environment server for {env_name or getattr(env_factory, '__name__', 'env')}.",
        lifespan=lifespan,
    )
    app.state.sessions = pool
    simulation = _server_mode(mode) == "simulation"
    app.include_router(
        build_router(
            pool,
            observation_cls=observation_cls,
            state_cls=state_cls,
            reset_observation_cls=reset_observation_cls,
            simulation=simulation,
        )
    )
    app.include_router(build_task_router(pool, env_name or pool.factory_name))
    _add_sockets(app, pool)
    _install_error_handlers(app)
    if web if web is not None else web_enabled_by_env():
        from openenv_hub.ui import mount_ui

        mount_ui(
            app,
            pool,
            observation_cls=observation_cls,
            readme=readme,
            custom_builder=ui_builder,
            show_default=show_default_ui,
        )
        app.add_api_route("/", _to_web_ui, include_in_schema=False)
    return app


async def _start_recording(pool: SessionPool, path: str | os.PathLike[str]) -> Any:
    """Attach a server-side trajectory recorder to the session core."""
    from openenv_hub.trajectories import ServerRecorder, TrajectoryWriter

    writer = TrajectoryWriter(path)
    metadata = await pool.metadata()
    recorder = ServerRecorder(writer, metadata.name, metadata.version)
    pool.observers.append(recorder)
    return recorder


def _add_sockets(app: FastAPI, pool: SessionPool) -> None:
    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await serve_ws(websocket, pool)

    @app.websocket("/mcp")
    async def mcp_ws(websocket: WebSocket) -> None:
        await serve_mcp_socket(websocket, pool)


async def _to_web_ui() -> RedirectResponse:
    return RedirectResponse("/web/")


def _server_mode(mode: str | None) -> str:
    chosen = (mode or os.environ.get("OPENENV_MODE") or "simulation").strip().lower()
    if chosen not in ("simulation", "production"):
        raise ConfigurationError(
            f"Invalid mode: {chosen!r}. Must be one of: ['simulation', 'production'] "
            "(from the mode argument or $OPENENV_MODE)."
        )
    return chosen


def _install_error_handlers(app: FastAPI) -> None:
    statuses: dict[type[Exception], int] = {
        SessionCapacityError: 503,
        SessionNotFoundError: 404,
        SessionError: 409,
        EnvironmentFactoryError: 500,
        EnvironmentExecutionError: 500,
    }

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ServerReplyError)
        status = next(code for cls, code in statuses.items() if isinstance(exc, cls))
        return JSONResponse(
            {"detail": exc.message, "code": exc.code, **exc.data}, status_code=status
        )

    for cls in statuses:
        app.add_exception_handler(cls, handle)


def uvicorn_options(
    *,
    ws_ping_interval_s: float | None = 20.0,
    ws_ping_timeout_s: float | None = 20.0,
    ws_max_size_mb: float = 16.0,
) -> dict[str, Any]:
    """The uvicorn settings environment servers run with.

    The server pings every WebSocket client each ``ws_ping_interval_s``; one that does not answer
    within ``ws_ping_timeout_s`` is disconnected and its session freed. The sans-I/O websockets
    protocol is preferred where uvicorn has it: it is the faster of uvicorn's implementations.
    """
    from uvicorn.config import WS_PROTOCOLS

    return {
        "ws": "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "auto",
        "ws_ping_interval": ws_ping_interval_s,
        "ws_ping_timeout": ws_ping_timeout_s,
        "ws_max_size": int(ws_max_size_mb * 1024 * 1024),
    }


def run(
    app: FastAPI | str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    reload: bool = False,
    ws_ping_interval_s: float | None = 20.0,
    ws_ping_timeout_s: float | None = 20.0,
    ws_max_size_mb: float = 16.0,
    log_level: str = "info",
) -> None:
    """Serve ``app`` (an app, or an import string such as ``"pkg.server.app:app"``) with uvicorn,
    with the options of :func:`uvicorn_options`."""
    import uvicorn

    if reload and not isinstance(app, str):
        raise ConfigurationError(
            "reload=True needs the app as an import string, e.g. 'pkg.app:app'"
        )
    options = uvicorn_options(
        ws_ping_interval_s=ws_ping_interval_s,
        ws_ping_timeout_s=ws_ping_timeout_s,
        ws_max_size_mb=ws_max_size_mb,
    )
    uvicorn.run(app, host=host, port=port, reload=reload, log_level=log_level, **options)
