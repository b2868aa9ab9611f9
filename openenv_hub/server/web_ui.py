"""The web UI as the server layer knows it: a mount function that a higher layer registers.

The server imports no UI module. :mod:`openenv_hub.ui` registers its mount here when it is
imported, and so does the package root when ``openenv_hub.create_app`` is first used (a mount
that imports the UI only when an app asks for it); ``create_app(web=True)`` calls the
registered mount. Without one, ``web=True`` is refused with what to import.

Layer: server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from openenv_hub.errors import ConfigurationError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from openenv_hub.server.sessions import SessionPool

__all__ = ["WebUIMount", "register_web_ui", "registered_web_ui"]


class WebUIMount(Protocol):
    """Mount a web UI for ``pool`` on ``app`` (``ui_options`` are ``create_app``'s UI options:
    ``observation_cls``, ``readme``, ``custom_builder``, ``show_default``)."""

    def __call__(self, app: FastAPI, pool: SessionPool, **ui_options: Any) -> None: ...


_registered: list[WebUIMount] = []


def register_web_ui(mount: WebUIMount) -> None:
    """Make ``mount`` the web UI of every app ``create_app(web=True)`` makes from now on."""
    _registered[:] = [mount]


def registered_web_ui() -> WebUIMount:
    """The registered mount; a :class:`ConfigurationError` saying what to import if none is."""
    if not _registered:
        raise ConfigurationError(
            "web=True needs the web UI, and none is registered: create the app with "
            "openenv_hub.create_app, or import openenv_hub.ui first."
        )
    return _registered[0]
