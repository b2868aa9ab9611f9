"""How an environment's app is served with uvicorn, wherever it runs: :func:`uvicorn_options`,
the settings every environment server runs with. :func:`openenv_hub.server.serve_app`, ``openenv
serve`` and the replicas of the Ray runtime (which serve an app inside a Ray actor) use them.

Layer: core.
"""

from __future__ import annotations

from typing import Any

from openenv_hub.settings import max_message_size_mb as max_message_size_mb_setting

__all__ = ["DEFAULT_GRACEFUL_SHUTDOWN_S", "uvicorn_options"]

DEFAULT_GRACEFUL_SHUTDOWN_S = 5.0


def uvicorn_options(
    *,
    ws_ping_interval_s: float | None = 20.0,
    ws_ping_timeout_s: float | None = 20.0,
    max_message_size_mb: float | None = None,
    graceful_shutdown_s: float = DEFAULT_GRACEFUL_SHUTDOWN_S,
) -> dict[str, Any]:
    """The uvicorn settings environment servers run with.

    The server pings every WebSocket client each ``ws_ping_interval_s``; one that does not answer
    within ``ws_ping_timeout_s`` is disconnected and its session freed. Frames over
    ``max_message_size_mb`` (default ``$OPENENV_MAX_MESSAGE_SIZE_MB`` or 16) close the socket
    with 1009. On shutdown, requests still running after ``graceful_shutdown_s`` are cancelled,
    so a stuck step cannot hold the process. The sans-I/O websockets protocol is preferred where
    uvicorn has it: it is the faster of uvicorn's implementations.
    """
    from uvicorn.config import WS_PROTOCOLS

    message_mb = max_message_size_mb_setting(max_message_size_mb)
    return {
        "ws": "websockets-sansio" if "websockets-sansio" in WS_PROTOCOLS else "auto",
        "ws_ping_interval": ws_ping_interval_s,
        "ws_ping_timeout": ws_ping_timeout_s,
        "ws_max_size": int(message_mb * 1024 * 1024),
        "timeout_graceful_shutdown": graceful_shutdown_s,
    }
