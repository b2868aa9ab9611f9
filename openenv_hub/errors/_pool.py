"""Errors of many sessions at once: a pool's slots, and the cluster behind them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openenv_hub.errors._base import OpenEnvError
from openenv_hub.errors._transport import TransportError
from openenv_hub.errors._wire import SessionCapacityError, SessionError
from openenv_hub.shown_urls import shown


class SlotError(OpenEnvError):
    """One slot of an :class:`~openenv_hub.client.pool.EnvPool` failed; the others went on.

    It stands in ``results[slot]`` (it is returned, not raised, unless the pool's policy says
    so). ``cause`` is the client's typed error; ``session_lost`` says whether the slot's session
    is gone (its replica died, the connection dropped, the session was closed, or the replica was
    full and no other had room), in which case the
    pool opens a new session for the slot on the next ``reset_all()`` (or at once, with
    ``on_error="replace"``: ``replaced_by`` is then the URL of the new session).
    """

    def __init__(self, slot: int, url: str, cause: BaseException, *, replaced_by: str = "") -> None:
        self.slot, self.url, self.cause, self.replaced_by = slot, url, cause, replaced_by
        super().__init__(f"Slot {slot} ({shown(url)}): {type(cause).__name__}: {cause}")

    @property
    def session_lost(self) -> bool:
        return isinstance(self.cause, (TransportError, SessionError, SessionCapacityError))


class PoolError(OpenEnvError):
    """Slots of an ``EnvPool(on_error="raise")`` failed. ``results`` holds every slot's result
    (a :class:`SlotError` where it failed), so the steps that succeeded are not lost."""

    def __init__(self, results: Sequence[Any]) -> None:
        self.results = list(results)
        self.failures = [r for r in self.results if isinstance(r, SlotError)]
        first = self.failures[0] if self.failures else None
        super().__init__(
            f"{len(self.failures)} of {len(self.results)} slots failed"
            + (f"; the first: {first}" if first else ""),
            hint="Call reset_all() to replace the failed sessions, or use on_error='return' to "
            "get the errors in the results.",
        )


class ClusterError(OpenEnvError):
    """No Ray cluster or Kubernetes API server answered where one was expected.

    ``address`` is where it looked (a Ray address, a kubeconfig path); ``hint`` says what to do.
    """

    def __init__(self, message: str, *, address: str = "", hint: str = "") -> None:
        self.address = address
        super().__init__(message, hint=hint)
