"""Observers of the session core: told of every reset, step and closed session (the server-side
trajectory recorder is one). They run on the event loop, after the call, and must be quick;
an observer that raises is logged and ignored.

Layer: server.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Protocol

__all__ = ["SessionObserver", "notify"]

logger = logging.getLogger("openenv_hub.server")


class SessionObserver(Protocol):
    def on_reset(
        self,
        session_id: str,
        params: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        """A reset returned ``payload`` (``{"observation", "reward", "done", ...}``)."""

    def on_step(
        self,
        session_id: str,
        action: dict[str, Any],
        payload: dict[str, Any],
        *,
        started_at: float,
        duration_s: float,
    ) -> None:
        """A step with ``action`` returned ``payload``."""

    def on_close(self, session_id: str) -> None:
        """The session ended."""


def notify(
    observers: list[SessionObserver],
    event: str,
    session_id: str,
    *args: Any,
    started_at: float | None = None,
    clock: float | None = None,
) -> None:
    """Call ``event`` on every observer; ``clock`` is the ``perf_counter`` when the call began."""
    timing: dict[str, float] = {}
    if started_at is not None and clock is not None:
        timing = {"started_at": started_at, "duration_s": time.perf_counter() - clock}
    for observer in observers:
        try:
            getattr(observer, event)(session_id, *args, **timing)
        except Exception:
            logger.exception("Session %s: observer %r failed in %s", session_id, observer, event)
