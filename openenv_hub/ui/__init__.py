"""The web UI: a Gradio app at ``/web`` built from the environment's schemas.

``create_app(..., web=True)`` (or ``ENABLE_WEB_INTERFACE=true``) calls :func:`mount_ui`. Each
browser tab gets its own session from the app's :class:`~openenv_hub.server.SessionPool`,
counted against ``max_concurrent_envs`` and closed when the tab closes or goes idle. The UI
drives the environment only through the pool, like ``/ws`` does.

gradio is an optional dependency (``pip install "openenv-hub[ui]"``); it is imported by
:func:`mount_ui`, never by ``import openenv_hub`` or ``import openenv_hub.ui``.

Layer: ui.
"""

from openenv_hub.server.web_ui import register_web_ui
from openenv_hub.ui.context import UIContext
from openenv_hub.ui.later import mount_ui_when_ready
from openenv_hub.ui.mount import MAX_UPLOAD_BYTES, UI_PATH, PreparedUI, mount_ui, prepare_ui

__all__ = ["MAX_UPLOAD_BYTES", "UI_PATH", "PreparedUI", "UIContext", "mount_ui", "prepare_ui"]

register_web_ui(mount_ui_when_ready)  # create_app(web=True) mounts this UI
