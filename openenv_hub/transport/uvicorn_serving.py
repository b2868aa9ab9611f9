"""How an environment's app is served with uvicorn, wherever it runs: :func:`uvicorn_options`,
the settings every environment server runs with, and :func:`tune_collector`, the collector's
thresholds for a process that serves thousands of sessions. :func:`openenv_hub.server.serve_app`,
``openenv serve`` and the replicas of the Ray runtime (which serve an app inside a Ray actor)
use both.

Why the collector: every request in flight holds a handful of tracked objects (its task and
coroutine frames, a future, the action and the observation). With Python's thresholds (a young
collection every 700 net allocations, an older one every tenth of those), a server stepping a
hundred sessions frees each request's objects before a collection sees them. With thousands of
sessions stepping at once, a request lives through many young collections, so its objects are
promoted to the oldest generation; a full collection then runs each time a quarter of that
generation is new, and each one walks every live object, the sessions' own included. At 4,096
sessions that cost the server more CPU than the steps did (``benchmarks/README.md``, run 5).
A larger young generation lets those requests end in it; a young collection costs in
proportion to what survives it, so this saves work at every size, and cyclic garbage waits
longer for its collection (a few MB at most). Past about a thousand sessions the requests in
flight alone outgrow a fixed young generation, so it grows with the sessions open
(:func:`collector_follows`, told by the session pools): room for
:data:`YOUNG_GENERATION_PER_SESSION` objects a session, in steps of
:data:`SESSIONS_PER_STEP` sessions (262,144 at 4,096 sessions, a young collection's pause
then a few tens of ms).

Layer: core.
"""

from __future__ import annotations

import gc
from typing import Any, Final

from openenv_hub.support.settings import header_timeout_s as header_timeout_s_setting
from openenv_hub.support.settings import max_header_size_kb as max_header_size_kb_setting
from openenv_hub.support.settings import max_message_size_mb as max_message_size_mb_setting

__all__ = [
    "DEFAULT_GRACEFUL_SHUTDOWN_S",
    "SESSIONS_PER_STEP",
    "YOUNG_GENERATION_PER_SESSION",
    "YOUNG_GENERATION_THRESHOLD",
    "collector_follows",
    "http_options",
    "tune_collector",
    "uvicorn_options",
    "websocket_protocol",
    "websocket_protocol_name",
]

DEFAULT_GRACEFUL_SHUTDOWN_S = 5.0


def uvicorn_options(
    *,
    ws_ping_interval_s: float | None = 20.0,
    ws_ping_timeout_s: float | None = 20.0,
    max_message_size_mb: float | None = None,
    graceful_shutdown_s: float = DEFAULT_GRACEFUL_SHUTDOWN_S,
    max_header_size_kb: float | None = None,
    app: Any = None,
) -> dict[str, Any]:
    """The uvicorn settings environment servers run with.

    The server pings every WebSocket client each ``ws_ping_interval_s``; one that does not answer
    within ``ws_ping_timeout_s`` is disconnected and its session freed. Frames over
    ``max_message_size_mb`` (default: the body limit of ``app``, when it is an app made by
    ``create_app``, so that one setting bounds both; else ``$OPENENV_MAX_MESSAGE_SIZE_MB`` or
    16) close the socket with 1009. On shutdown, requests still running after
    ``graceful_shutdown_s`` are cancelled, so a stuck step cannot hold the process. WebSockets
    run on :class:`~openenv_hub.transport.uvicorn_websocket.WebSocketProtocol` (uvicorn's sans-I/O protocol
    reading frames itself and handing ``/ws`` its frames directly) where uvicorn has the sans-I/O
    protocol, else on uvicorn's choice; frames are not compressed (no ``permessage-deflate``),
    so that the protocol reads each in one pass. Requests' heads are bounded in size and time,
    and clients are who connects (see :func:`http_options`).
    """
    if max_message_size_mb is None:
        max_message_size_mb = getattr(getattr(app, "state", None), "max_message_size_mb", None)
    message_mb = max_message_size_mb_setting(max_message_size_mb)
    return {
        "ws": websocket_protocol(),
        "ws_per_message_deflate": False,
        "ws_ping_interval": ws_ping_interval_s,
        "ws_ping_timeout": ws_ping_timeout_s,
        "ws_max_size": int(message_mb * 1024 * 1024),
        "timeout_graceful_shutdown": graceful_shutdown_s,
        **http_options(max_header_size_kb=max_header_size_kb),
    }


def http_options(*, max_header_size_kb: float | None = None) -> dict[str, Any]:
    """The uvicorn settings of every server of the toolkit (environments' and LocalHub's) for
    HTTP requests before they reach the app.

    A request's head (request line and headers) over ``max_header_size_kb`` (default
    ``$OPENENV_MAX_HEADER_SIZE_KB`` or 64) is answered 431, and one not received within
    ``$OPENENV_HEADER_TIMEOUT_S`` (default 20) 408, the connection then closed (:mod:`openenv_hub.transport.uvicorn_http`; with uvicorn's ``h11`` protocol, where
    ``httptools`` is missing, only the size is bounded). ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` are not uvicorn's to trust (it trusts them from 127.0.0.1 by
    default, so any local process could pass for another client): an app trusts the proxies
    it is told of (``trusted_proxies`` in ``create_app``).
    """
    header_bytes = int(max_header_size_kb_setting(max_header_size_kb) * 1024)
    header_timeout_s_setting(None)  # read by each connection: a wrong one fails here, at once
    return {
        "http": http_protocol_class(),
        "h11_max_incomplete_event_size": header_bytes,
        "proxy_headers": False,
    }


def http_protocol_class() -> Any:
    """The HTTP protocol class of :func:`http_options`, or ``"h11"`` without ``httptools``."""
    try:
        from openenv_hub.transport.uvicorn_http import BoundedHeadsProtocol
    except ImportError:
        return "h11"
    return BoundedHeadsProtocol


def websocket_protocol() -> Any:
    """The WebSocket protocol class servers run (see :func:`uvicorn_options`), or ``"auto"``
    with a uvicorn that has no sans-I/O protocol to build it on."""
    try:
        from openenv_hub.transport.uvicorn_websocket import WebSocketProtocol
    except ImportError:
        return "auto"
    return WebSocketProtocol


def websocket_protocol_name(protocol: Any) -> str:
    """How logs name a protocol of :func:`websocket_protocol`."""
    return protocol if isinstance(protocol, str) else f"{protocol.__module__}.{protocol.__name__}"


#: Net allocations of tracked objects between young collections (Python's default is 700).
YOUNG_GENERATION_THRESHOLD: Final = 50_000
#: Room in the young generation for each open session's request in flight (at 4,096 sessions
#: stepping at once, 50,000 was too little: every young collection walked the requests; 200,000
#: let them end young).
YOUNG_GENERATION_PER_SESSION: Final = 64
#: The young generation follows the sessions open in steps of this many.
SESSIONS_PER_STEP = 1_024


class _Tuning:
    """What :func:`tune_collector` set in this process (``base`` None: it set nothing)."""

    base: int | None = None
    young: int | None = None  # the young threshold collector_follows last set


def collector_follows(sessions: int) -> int:
    """Give the young generation room for the requests of ``sessions`` sessions in flight:
    :data:`YOUNG_GENERATION_PER_SESSION` objects each, counted in whole steps of
    :data:`SESSIONS_PER_STEP` sessions, and never below what :func:`tune_collector` set.

    Does nothing in a process that did not call :func:`tune_collector`, or whose young
    threshold was changed since by someone else. Cheap enough to call on every session opened
    and closed. Returns the young threshold in force.
    """
    young, *older = gc.get_threshold()
    if _Tuning.base is None or young != (_Tuning.young or _Tuning.base):
        return young
    steps = sessions // SESSIONS_PER_STEP
    wanted = max(_Tuning.base, YOUNG_GENERATION_PER_SESSION * SESSIONS_PER_STEP * steps)
    if wanted != young:
        gc.set_threshold(wanted, *older)
        _Tuning.young = wanted
    return wanted


def tune_collector() -> tuple[int, ...]:
    """Raise the young generation's threshold to :data:`YOUNG_GENERATION_THRESHOLD`, and let
    :func:`collector_follows` grow it with the sessions open. A higher one, or 0 (automatic
    collection off), set by the process already, is kept (and not grown); so are the older
    generations' thresholds.

    Returns:
        The thresholds now in force (``gc.get_threshold()``).
    """
    young, *older = gc.get_threshold()
    if 0 < young < YOUNG_GENERATION_THRESHOLD:
        gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *older)
        _Tuning.base, _Tuning.young = YOUNG_GENERATION_THRESHOLD, None
    return gc.get_threshold()
