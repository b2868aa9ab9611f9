"""Stop every provider still running when the interpreter exits.

Providers register themselves on start and unregister on stop. Servers outside this process
(containers, services) are also covered when the process is killed: :func:`ensure_reaper`
starts this process's reaper, which removes what carries its owner label once it dies.

Layer: runtimes.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from typing import TYPE_CHECKING

from openenv_hub.runtimes._reaper import ensure_reaper

if TYPE_CHECKING:
    from openenv_hub.runtimes.base import Provider

__all__ = ["ensure_reaper", "running", "track", "untrack"]

_lock = threading.Lock()
_running: list[Provider] = []
_registered = False


def track(provider: Provider) -> None:
    """Stop ``provider`` at interpreter exit unless it was stopped before."""
    global _registered
    with _lock:
        _running.append(provider)
        if not _registered:
            atexit.register(_stop_all)
            _registered = True


def untrack(provider: Provider) -> None:
    with _lock, contextlib.suppress(ValueError):
        _running.remove(provider)


def running() -> list[Provider]:
    """The providers of this process that have not been stopped."""
    with _lock:
        return list(_running)


def _stop_all() -> None:
    for provider in reversed(running()):
        with contextlib.suppress(Exception):
            provider.stop()
