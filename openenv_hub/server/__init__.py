"""The environment server: the session core and its HTTP, WebSocket and MCP adapters.

Layer: server.
"""

from openenv_hub.server.app import create_app, serve_app
from openenv_hub.server.app import run as run  # the deprecated name of serve_app
from openenv_hub.server.command import serve_main
from openenv_hub.server.sessions import Session, SessionPool

__all__ = ["Session", "SessionPool", "create_app", "serve_app", "serve_main"]
