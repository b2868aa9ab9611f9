"""Observers of the session core: told of every reset, step, restore and closed session (the
server-side trajectory recorder is one). They run on the event loop, after the call, and must
be quick; an observer that raises is logged and ignored. An observer with a true
``wants_snapshots`` attribute is also given, as ``snapshot=``, the id of the snapshot the
server kept after the call (None when the environment takes none; see
:mod:`openenv_hub.server.snapshots`), and as ``replay=``, what the environment said of
replaying the episode (a :class:`~openenv_hub.types.ReplayFacts`); ``on_restore`` is optional.

Layer: server.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from openenv_hub.types import ReplayFacts

__all__ = ["SessionObserver", "notify", "wants_snapshots"]

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


_TAKES_SNAPSHOTS = frozenset({"on_reset", "on_step"})


def wants_snapshots(observers: list[SessionObserver]) -> bool:
    """Whether any of ``observers`` wants the ids of snapshots."""
    return any(getattr(observer, "wants_snapshots", False) for observer in observers)


def notify(
    observers: list[SessionObserver],
    event: str,
    session_id: str,
    *args: Any,
    started_at: float | None = None,
    duration_s: float | None = None,
    snapshot: str | None = None,
    replay: ReplayFacts | None = None,
) -> None:
    """Call ``event`` on every observer that has it (``snapshot`` and ``replay`` only for those
    that want snapshots)."""
    timing: dict[str, Any] = {}
    if started_at is not None and duration_s is not None:
        timing = {"started_at": started_at, "duration_s": duration_s}
    for observer in observers:
        method = getattr(observer, event, None)
        if method is None:
            continue
        wants = event in _TAKES_SNAPSHOTS and getattr(observer, "wants_snapshots", False)
        extra = {"snapshot": snapshot, "replay": replay} if wants else {}
        try:
            method(session_id, *args, **timing, **extra)
        except Exception:
            logger.exception("Session %s: observer %r failed in %s", session_id, observer, event)
