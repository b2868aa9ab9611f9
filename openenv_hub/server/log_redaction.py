"""Session keys kept out of the server's logs.

OpenEnv's clients join a session over a WebSocket with ``/ws?session_id=KEY``, and uvicorn logs
each request's path with its query (``"WebSocket /ws?session_id=..." [accepted]`` and the
access log). :func:`redact_session_keys_in_logs` adds a filter to uvicorn's loggers that
replaces the value of every ``session_id`` query parameter with ``[redacted]``, so that whoever
reads the logs learns no key (see :mod:`openenv_hub.server.session_keys`).

Layer: server.
"""

from __future__ import annotations

import logging
import re

__all__ = ["SessionKeyFilter", "redact_session_keys_in_logs"]

_KEY_IN_QUERY = re.compile(r"([?&]session_id=)[^&\s\"']*")
_LOGGERS = ("uvicorn.access", "uvicorn.error")


class SessionKeyFilter(logging.Filter):
    """Rewrites the arguments (and text) of a record that hold a ``session_id=`` query
    parameter, keeping their shape (uvicorn's access formatter unpacks them)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(_holds_key(arg) for arg in record.args):
            record.args = tuple(_redacted(arg) for arg in record.args)
        if _holds_key(record.msg):
            record.msg = _redacted(record.msg)
        return True


def _holds_key(value: object) -> bool:
    return isinstance(value, str) and "session_id=" in value


def _redacted(value: object) -> object:
    return _KEY_IN_QUERY.sub(r"\1[redacted]", value) if isinstance(value, str) else value


def redact_session_keys_in_logs() -> None:
    """Add :class:`SessionKeyFilter` to uvicorn's loggers (once; safe to call again)."""
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, SessionKeyFilter) for f in logger.filters):
            logger.addFilter(SessionKeyFilter())
