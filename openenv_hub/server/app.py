"""``create_app``: an environment as a FastAPI app, and ``run`` to serve it with uvicorn.

Layer: server.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import pydantic_core
from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

import openenv_hub.server.settings as settings
from openenv_hub.errors import ActionValidationError, ConfigurationError, ServerReplyError
from openenv_hub.server.browsers import BrowserPolicy, add_browser_guard
from openenv_hub.server.episode_http import EpisodeDispatch
from openenv_hub.server.episodes import build_episodes_router
from openenv_hub.server.http import build_router
from openenv_hub.server.index import add_index
from openenv_hub.server.limits import RequestBodyLimit
from openenv_hub.server.log_redaction import redact_session_keys_in_logs
from openenv_hub.server.proxies import add_trusted_proxies
from openenv_hub.server.sessions import DEFAULT_IDLE_TIMEOUT_S, EnvFactory, SessionPool
from openenv_hub.server.tasks import build_task_router
from openenv_hub.server.watch import BIND_HOST_SETTING
from openenv_hub.server.web_ui import registered_web_ui
from openenv_hub.server.websocket import serve_mcp_socket, serve_ws
from openenv_hub.support.deprecation import warn_renamed
from openenv_hub.transport.uvicorn_serving import (
    DEFAULT_GRACEFUL_SHUTDOWN_S,
    tune_collector,
    uvicorn_options,
    websocket_protocol_name,
)
from openenv_hub.types import Action, Observation, State

__all__ = [
    "ServerMode",
    "create_app",
    "serve_app",
    "tell_bind_host",
    "uvicorn_options",
    "web_enabled_by_env",
]

ServerMode = Literal["simulation", "production"]

logger = logging.getLogger("openenv_hub.server")


def web_enabled_by_env() -> bool:
    """Whether ``ENABLE_WEB_INTERFACE`` asks for the web UI."""
    return settings.web_interface()


def create_app(
    env_factory: EnvFactory,
    action_cls: type[Action] | None = None,
    observation_cls: type[Observation] | None = None,
    *,
    state_cls: type[State] | None = None,
    reset_observation_cls: type[Observation] | None = None,
    env_name: str | None = None,
    mode: ServerMode | None = None,
    max_concurrent_envs: int | None = None,
    max_sessions_per_client: int | None = None,
    session_idle_timeout_s: float | None = DEFAULT_IDLE_TIMEOUT_S,
    step_hard_timeout_s: float | None = None,
    run_on_event_loop: bool | None = None,
    max_message_size_mb: float | None = None,
    web: bool | None = None,
    readme: str | None = None,
    ui_builder: Callable[..., Any] | None = None,
    show_default_ui: bool = True,
    trajectories: str | os.PathLike[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    watch: bool | None = None,
    trusted_proxies: Sequence[str] | None = None,
    bind_host: str | None = None,
) -> FastAPI:
    """Serve an environment over HTTP, ``/ws`` and ``/mcp`` (and the web UI at ``/web``).

    Args:
        env_factory: The environment class, or a function returning a new instance. A factory
            may declare its models as ``action_cls``, ``observation_cls`` and ``state_cls``
            attributes (as ``GymnasiumEnvironment.factory(...)`` does); they are the defaults.
        action_cls: Action model that ``step`` payloads are validated against.
        observation_cls: Observation model, published by ``/schema``.
        state_cls: State model, published by ``/schema``.
        reset_observation_cls: Observation model of ``reset`` when it differs from ``step``'s.
        env_name: Name shown by ``/metadata`` and the UI (default: the environment's own).
        mode: ``"simulation"`` (default, or ``$OPENENV_MODE``) serves HTTP reset/step/state;
            ``"production"`` leaves them out, so agents reach the environment through MCP only.
        max_concurrent_envs: Sessions allowed at once, stateless HTTP calls included. Default
            ``$MAX_CONCURRENT_ENVS`` or 64.
        max_sessions_per_client: Sessions one client address may hold at once. Default
            ``$OPENENV_MAX_SESSIONS_PER_CLIENT``, else no limit of its own. The address is the
            one that connected: behind a proxy every client has the proxy's, unless the proxy
            is trusted (``trusted_proxies``) to name the client in ``X-Forwarded-For``.
        session_idle_timeout_s: Close sessions idle this long; ``None`` keeps them forever.
        step_hard_timeout_s: A call stuck on a session's thread this long is abandoned and its
            slot freed. Default ``$OPENENV_STEP_HARD_TIMEOUT_S`` or 600.
        run_on_event_loop: Call the environment's synchronous methods on the event loop
            instead of a thread per session (default: its ``RUNS_ON_EVENT_LOOP``); only for
            quick calls.
        max_message_size_mb: Largest HTTP body (and, through :func:`run`, WebSocket frame)
            accepted. Default ``$OPENENV_MAX_MESSAGE_SIZE_MB`` or 16.
        web: Mount the Gradio debugging UI at ``/web``. Default: ``$ENABLE_WEB_INTERFACE``.
        readme: Markdown shown in the UI's README tab (default: ``README.md`` next to the app).
        ui_builder: Function ``(context) -> gradio.Blocks`` adding a custom UI tab.
        show_default_ui: Set False to show only the custom tab.
        trajectories: Record every session's episodes to this ``.jsonl`` or ``.parquet`` file
            (see :mod:`openenv_hub.trajectories`). A JSON Lines file is appended to as each
            episode ends (readable while the server runs); a Parquet file is written when the
            server stops, to the next free name (``NAME-1.parquet``) if one is there. The latest
            episodes are also served by ``GET /episodes`` where watching is on.
        allowed_origins: Origins (``scheme://host[:port]``, or ``"*"``) whose web pages may
            call the server besides its own pages. Default ``$OPENENV_ALLOWED_ORIGINS``; on a
            Space, its own origin is added. Other pages are refused
            (:mod:`openenv_hub.server.browsers`); clients that are not browsers are unaffected.
        allowed_hosts: Host names answered besides the loopback names (``localhost``,
            ``127.0.0.1``, ``[::1]``) and the address a client connected to (``.example.com``
            for that name and every name under it, ``"*"`` for any). Default
            ``$OPENENV_ALLOWED_HOSTS``; on a Space, its own host is added.
        trusted_proxies: Addresses or networks (``"10.0.0.0/8"``, or ``"*"``) of the proxies
            in front of the server, whose ``X-Forwarded-For``, ``X-Forwarded-Proto``,
            ``X-Forwarded-Host`` and ``Forwarded`` headers are believed. Default
            ``$OPENENV_TRUSTED_PROXIES``, else none (:mod:`openenv_hub.server.proxies`).
        watch: Let others watch, list and fork the sessions of this server (the web UI's
            Sessions tab, the recorded episodes). Default ``$OPENENV_WATCH``, else on only for
            a server bound to a loopback address and not on a Space
            (:func:`~openenv_hub.server.watch.watch_rule`).
        bind_host: The address the server is bound to, for that rule, when known here;
            :func:`serve_app` and ``openenv serve`` tell the app (:func:`tell_bind_host`).
            Default ``$OPENENV_BIND_HOST``.
    """
    action_cls = action_cls or getattr(env_factory, "action_cls", None) or Action
    observation_cls = (
        observation_cls or getattr(env_factory, "observation_cls", None) or Observation
    )
    state_cls = state_cls or getattr(env_factory, "state_cls", None) or State
    pool = SessionPool(
        env_factory,
        action_cls=action_cls,
        max_concurrent_envs=max_concurrent_envs,
        max_sessions_per_client=max_sessions_per_client,
        idle_timeout_s=session_idle_timeout_s,
        step_hard_timeout_s=step_hard_timeout_s,
        run_on_event_loop=run_on_event_loop,
        env_name=env_name,
    )
    pool.watch = watch
    pool.bind_host = bind_host
    message_mb = settings.max_message_size_mb(max_message_size_mb)
    browsers = BrowserPolicy.from_settings(allowed_origins, allowed_hosts, trusted_proxies)
    redact_session_keys_in_logs()
    shows_sessions = bool(trajectories) or (web if web is not None else web_enabled_by_env())

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if shows_sessions:
            _announce_watch_rule(pool)
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
    app.state.max_message_size_mb = message_mb
    simulation = _server_mode(mode) == "simulation"
    if simulation:  # innermost: every check of the middlewares below runs before it
        app.add_middleware(EpisodeDispatch, pool=pool)
    app.add_middleware(RequestBodyLimit, max_bytes=int(message_mb * 1024 * 1024))
    add_trusted_proxies(app, browsers.proxies)  # inside the guard, which sees the proxy itself
    add_browser_guard(app, browsers)  # outermost: refused requests are never read
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
    app.include_router(build_episodes_router(pool))
    _add_sockets(app, pool)
    _install_error_handlers(app)
    web_on = web if web is not None else web_enabled_by_env()
    add_index(app, name=env_name or pool.factory_name, web=web_on)
    if web_on:
        registered_web_ui()(
            app,
            pool,
            observation_cls=observation_cls,
            readme=readme,
            custom_builder=ui_builder,
            show_default=show_default_ui,
        )
    return app


def _announce_watch_rule(pool: SessionPool) -> None:
    """Say at startup whether others may watch this server's sessions; loudly where it is on
    for a server that others reach."""
    rule = pool.watch_rule()
    if rule.shared:
        logger.warning(
            "Watching sessions is ON for a server others can reach (%s): anyone who can open "
            "its /web sees every client's sessions and recorded episodes.",
            rule.reason,
        )
    else:
        logger.info("Watching sessions: %s (%s)", "on" if rule.allowed else "off", rule.reason)


async def _start_recording(pool: SessionPool, path: str | os.PathLike[str]) -> Any:
    """Attach a server-side trajectory recorder to the session core."""
    from openenv_hub.trajectories import ServerRecorder, TrajectoryWriter

    writer = TrajectoryWriter(path, append=True)  # a restart keeps what was recorded before
    if Path(writer.path) != Path(path):
        logger.info("%s exists: recording this run's episodes to %s", path, writer.path)
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


def _server_mode(mode: str | None) -> ServerMode:
    chosen = (mode or settings.mode() or "simulation").strip().lower()
    if chosen == "simulation":
        return "simulation"
    if chosen == "production":
        return "production"
    raise ConfigurationError(
        f"Invalid mode: {chosen!r}. Must be one of: ['simulation', 'production'] "
        "(from the mode argument or $OPENENV_MODE)."
    )


def _install_error_handlers(app: FastAPI) -> None:
    """Every server error answers with the status its class declares (openenv_hub.errors); request
    validation errors are rendered as JSON whatever input they quote."""

    async def server_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ServerReplyError)
        errors = exc.errors if isinstance(exc, ActionValidationError) else None
        body = {"detail": errors or exc.message, **exc.wire_data()}
        body.pop("errors", None)
        return _json(body, exc.http_status)

    async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return _json({"detail": exc.errors()}, 422)

    app.add_exception_handler(ServerReplyError, server_error)
    app.add_exception_handler(RequestValidationError, invalid_request)


def _json(content: Any, status: int) -> JSONResponse:
    body = pydantic_core.to_json(content, fallback=str, inf_nan_mode="strings")
    return JSONResponse(pydantic_core.from_json(body), status_code=status)


def serve_app(
    app: FastAPI | str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    reload: bool = False,
    ws_ping_interval_s: float | None = 20.0,
    ws_ping_timeout_s: float | None = 20.0,
    max_message_size_mb: float | None = None,
    graceful_shutdown_s: float = DEFAULT_GRACEFUL_SHUTDOWN_S,
    log_level: str = "info",
    workers: int = 1,
) -> None:
    """Serve ``app`` (an app, or an import string such as ``"pkg.server.app:app"``) with uvicorn,
    with the options of :func:`uvicorn_options`. The frame limit defaults to the app's body
    limit, so one setting bounds both. ``workers`` > 1 serves the address from that many
    processes (:mod:`openenv_hub.server.processes`: each holds its own sessions, up to
    ``max_concurrent_envs`` each; a request naming a session reaches the process that holds
    it)."""
    import uvicorn

    from openenv_hub.server.processes import check_workers

    check_workers(workers)
    if reload and not isinstance(app, str):
        raise ConfigurationError(
            "reload=True needs the app as an import string, e.g. 'pkg.app:app'"
        )
    if reload and workers > 1:
        raise ConfigurationError("reload=True serves from one process: drop workers, or reload")
    if isinstance(app, str) and not reload:  # imported here, as uvicorn would, to tell it
        # (and, for workers > 1, built once before the processes fork)
        from uvicorn.importer import ImportFromStringError, import_from_string

        try:
            app = import_from_string(app)
        except ImportFromStringError as exc:
            raise ConfigurationError(
                f"The app {app!r} does not load: {exc}",
                hint="Name it as module.path:attribute, importable from this folder.",
            ) from None
    if not tell_bind_host(app, host):
        # No app of create_app's to tell: the server runs in the reloader's child process, or
        # the app wraps one; either reads the address from the environment it inherits.
        os.environ[BIND_HOST_SETTING] = host
    options = uvicorn_options(
        ws_ping_interval_s=ws_ping_interval_s,
        ws_ping_timeout_s=ws_ping_timeout_s,
        max_message_size_mb=max_message_size_mb,
        graceful_shutdown_s=graceful_shutdown_s,
        app=app,
    )
    if reload:  # uvicorn's reloader supervises the server process
        uvicorn.run(app, host=host, port=port, reload=True, log_level=log_level, **options)
        return
    if workers > 1:
        from openenv_hub.server.processes import serve_processes

        serve_processes(
            app, host=host, port=port, workers=workers, options=options, log_level=log_level
        )
        return
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, **options)
    logging.getLogger("uvicorn.error").info(
        "openenv-hub server: WebSocket implementation %s, frames up to %g MB, graceful "
        "shutdown %g s",
        websocket_protocol_name(options["ws"]),
        options["ws_max_size"] / (1024 * 1024),
        graceful_shutdown_s,
    )
    server = uvicorn.Server(config)
    gc.freeze()  # what import made lives as long as the server: no collection need scan it
    tune_collector()  # requests of thousands of sessions end in the young generation
    server.run()
    if not server.started:
        raise SystemExit(3)  # what uvicorn.run exits with when the app does not start


def tell_bind_host(app: Any, host: str) -> bool:
    """Tell an app made by :func:`create_app` the address it is served on (for the rule of who
    may watch its sessions); False when ``app`` is not one (an import string, another app)."""
    pool = getattr(getattr(app, "state", None), "sessions", None)
    if pool is None:
        return False
    pool.bind_host = host
    return True


def run(app: FastAPI | str, **options: Any) -> None:
    """Deprecated: the old name of :func:`serve_app` (same arguments)."""
    warn_renamed("openenv_hub.run", "openenv_hub.serve_app (same arguments)", removed_in="0.2")
    serve_app(app, **options)
