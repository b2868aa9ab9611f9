"""Building the web UI and mounting it on an environment's app: :func:`mount_ui` now, or
:func:`prepare_ui` to build it and mount it later (:mod:`openenv_hub.ui.later` does, so that the
server's start does not wait for gradio).

Layer: ui.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.routing import Mount, Route

from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.server.watch import session_watch
from openenv_hub.support.sync_bridge import run_to_end
from openenv_hub.types import EnvironmentMetadata, Observation
from openenv_hub.ui.context import UIContext

if TYPE_CHECKING:
    from fastapi import FastAPI

    from openenv_hub.server.sessions import SessionPool
    from openenv_hub.ui.tabs import TabSessions

__all__ = ["MAX_UPLOAD_BYTES", "UI_PATH", "PreparedUI", "mount_ui", "prepare_ui"]

logger = logging.getLogger("openenv_hub.ui")

UI_PATH = "/web"

MAX_UPLOAD_BYTES = 1024 * 1024
"""What ``/web/gradio_api/upload`` accepts in one file (the generated UI has no file inputs;
a custom tab may take small files). Larger uploads are refused with 413 while being read."""


def mount_ui(
    app: FastAPI,
    pool: SessionPool,
    *,
    observation_cls: type[Observation] = Observation,
    readme: str | None = None,
    custom_builder: Callable[[UIContext], Any] | None = None,
    show_default: bool = True,
    path: str = UI_PATH,
) -> UIContext:
    """Mount the web UI on ``app`` at ``path`` now, on the same server as ``/ws``.

    (``create_app(..., web=True)`` mounts it once built instead, so that it does not delay
    the server's start; see :mod:`openenv_hub.ui.later`.)

    Args:
        app: The environment's FastAPI app.
        pool: The app's session core; the UI opens one session per browser tab from it.
        observation_cls: Observation model (its schema is passed to ``custom_builder``).
        readme: Markdown for the README tab. Default: the environment's ``readme_content``,
            ``$ENV_README_PATH``, or ``README.md`` in the environment's folder.
        custom_builder: ``(UIContext) -> gradio.Blocks``, shown as an extra tab.
        show_default: Set False to show only the custom tab (and the README).
        path: Where to mount the UI.

    Returns:
        The context the UI was built with.

    Raises:
        DependencyNotInstalledError: gradio is not installed.
        TypeError: ``custom_builder`` did not return a ``gradio.Blocks``.
    """
    prepared = prepare_ui(
        app, pool, observation_cls=observation_cls, readme=readme,
        custom_builder=custom_builder, show_default=show_default, path=path,
    )  # fmt: skip
    prepared.mount()
    _cleanup_on_shutdown(app, prepared.tabs)
    return prepared.context


@dataclass
class PreparedUI:
    """A built UI, ready to mount: :meth:`mount` adds it to the app (on the event loop's
    thread once the app serves); ``tabs.cleanup()`` deletes the tabs' files at shutdown."""

    context: UIContext
    tabs: TabSessions
    mount: Callable[[], None]


def prepare_ui(
    app: FastAPI,
    pool: SessionPool,
    *,
    observation_cls: type[Observation] = Observation,
    readme: str | None = None,
    custom_builder: Callable[[UIContext], Any] | None = None,
    show_default: bool = True,
    path: str = UI_PATH,
) -> PreparedUI:
    """Import gradio and build the UI (the slow part of :func:`mount_ui`), without mounting it."""
    try:
        import gradio as gr
    except ImportError:
        raise DependencyNotInstalledError("gradio", "ui", feature="The web UI") from None

    from openenv_hub.ui.actions import Actions
    from openenv_hub.ui.blocks import build_blocks
    from openenv_hub.ui.counter_frames import FramesFirst
    from openenv_hub.ui.readme import find_readme, strip_front_matter
    from openenv_hub.ui.tabs import TabSessions
    from openenv_hub.ui.watch_stream import WATCH_ROUTE, watch_route

    metadata = _read_metadata(pool)
    # The pool keeps its factory private; it locates the environment's folder for the README.
    factory = pool.factory
    text = find_readme(factory, readme or metadata.readme_content)
    tabs = TabSessions(pool, env_name=_file_safe(metadata.name))
    ctx = UIContext(
        pool=pool,
        metadata=metadata,
        action_schema=pool.action_cls.model_json_schema(),
        observation_schema=observation_cls.model_json_schema(),
        readme=strip_front_matter(text) if text else "",
        _tabs=tabs,
    )
    actions = Actions(tabs, replay_ignores=observation_cls.replay_ignores)
    blocks = build_blocks(ctx, actions, show_default=show_default, custom_builder=custom_builder)
    blocks.queue(default_concurrency_limit=None)
    options = _mount_options(gr.mount_gradio_app)

    def own_session(key: str) -> str | None:
        tab = tabs.get(key)
        return tab.session.id if tab is not None and tab.session is not None else None

    watch = session_watch(pool) if show_default else None
    stream = watch_route(pool, watch, own_session) if show_default else None  # Sessions tab's

    def mount() -> None:
        gr.mount_gradio_app(app, blocks, path=path, **options)
        (ui,) = [r for r in app.router.routes if isinstance(r, Mount) and r.path == path]
        ui.app.add_middleware(FramesFirst)  # type: ignore[attr-defined]  # gradio's FastAPI app
        if stream is not None:
            ui.routes.append(Route(WATCH_ROUTE, stream, methods=["GET"], include_in_schema=False))

    return PreparedUI(context=ctx, tabs=tabs, mount=mount)


def _cleanup_on_shutdown(app: FastAPI, tabs: TabSessions) -> None:
    """Delete the tabs' history files when the app's lifespan ends."""
    previous = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(target: Any) -> AsyncIterator[Any]:
        async with previous(target) as state:
            try:
                yield state
            finally:
                tabs.cleanup()

    app.router.lifespan_context = lifespan


def _mount_options(mount: Callable[..., Any]) -> dict[str, Any]:
    """Look and switches for ``gr.mount_gradio_app``, limited to those it accepts."""
    from openenv_hub.ui.labels import LABELS_SCRIPT
    from openenv_hub.ui.theme import CSS, theme

    options: dict[str, Any] = {
        "theme": theme(),
        "css": CSS,
        "head": LABELS_SCRIPT,
        "max_file_size": MAX_UPLOAD_BYTES,
        "ssr_mode": False,
        "pwa": False,
        "mcp_server": False,
        "run_history": False,  # added in a later gradio 6 release
        "enable_monitoring": False,
        "footer_links": ["gradio", "settings"],
    }
    accepted = inspect.signature(mount).parameters
    return {key: value for key, value in options.items() if key in accepted}


def _read_metadata(pool: SessionPool) -> EnvironmentMetadata:
    """``pool.metadata()``, read now on a helper thread (the caller may be inside a loop)."""
    try:
        return run_to_end(pool.metadata(), thread_name="openenv-ui-metadata")
    except Exception as exc:
        name = pool.env_name or pool.factory_name
        logger.warning("Could not read the environment's metadata for the web UI: %s", exc)
        return EnvironmentMetadata(name=name, description=f"{name} environment")


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "env"
