"""``SyncEnvPool``: the synchronous twin of :class:`~openenv_hub.client.pool.EnvPool`.

Same methods, same placement and error policies; the slots' requests run at once on a pool of
threads (one per slot, up to ``max_threads``), each slot a
:class:`~openenv_hub.client.SyncEnvClient`::

    with EnvPool("http://127.0.0.1:8000", size=8).sync() as pool:
        results = pool.reset_all()
        results = pool.step_all([{"message": "hi"}] * 8)

Layer: client.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import openenv_hub.client._pool_core as core
from openenv_hub.client._core import ActT, ObsT, StateT
from openenv_hub.client._pool_core import OnError, Opening, Placement, Slot, SlotMachine
from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.errors import SlotError

if TYPE_CHECKING:
    from openenv_hub.client.env_client import EnvClient
    from openenv_hub.client.sync_client import SyncEnvClient
    from openenv_hub.runtimes import Provider
    from openenv_hub.types import StepResult

__all__ = ["SyncEnvPool"]

Self = TypeVar("Self", bound="SyncEnvPool[Any, Any, Any]")
T = TypeVar("T")


class SyncEnvPool(Generic[ActT, ObsT, StateT]):
    """``size`` synchronous sessions stepped together; see :class:`EnvPool` for the arguments.

    ``max_threads`` bounds the threads that run the slots' requests (default: one per slot, at
    most 64).
    """

    def __init__(
        self,
        urls_or_provider: str | Sequence[str] | Provider,
        size: int = 64,
        *,
        client: type[EnvClient[ActT, ObsT, StateT]] | None = None,
        on_error: OnError = "return",
        max_threads: int | None = None,
        **client_options: Any,
    ) -> None:
        self.client_class: type[EnvClient[Any, Any, Any]] = client or GenericEnvClient
        self.machine: SlotMachine[SyncEnvClient[ActT, ObsT, StateT]] = SlotMachine(
            size, Placement.of(urls_or_provider), on_error, self._new_client
        )
        self.size, self.on_error, self.placement = size, on_error, self.machine.placement
        self.slots, self.replacements = self.machine.slots, self.machine.replacements
        self.client_options = client_options
        self._threads = ThreadPoolExecutor(
            max_workers=max_threads or min(size, 64), thread_name_prefix="openenv-pool"
        )

    def _new_client(self, url: str) -> SyncEnvClient[ActT, ObsT, StateT]:
        return self.client_class(
            url, **self.placement.client_options(self.client_options, url)
        ).sync()

    def _each(self, function: Callable[..., T], *columns: Sequence[Any]) -> list[T]:
        """``function`` over the columns' rows, at once on the threads; results in order. One
        row runs on the calling thread (which may be one of the pool's own, all of them busy)."""
        if len(columns[0]) == 1:
            return [function(*row) for row in zip(*columns, strict=True)]
        return list(self._threads.map(function, *columns))

    # -- sessions --------------------------------------------------------------------------

    def open(self: Self) -> Self:
        """Open every slot's session; raises when not a single one opens."""
        failures = self._open(self.slots, self.placement.urls())
        first = next((f for f in failures if f is not None), None)
        core.after_open(sum(s.client is not None for s in self.slots), first)
        return self

    def _open(
        self, slots: Sequence[Slot[SyncEnvClient[ActT, ObsT, StateT]]], urls: list[str]
    ) -> list[BaseException | None]:
        """New sessions for ``slots``: their old ones dropped, all placed, then connected."""
        self._each(self._drop, slots)
        openings = [self.machine.opening(slot, urls) for slot in slots]
        return self._each(self._connect, openings)

    @staticmethod
    def _connect(opening: Opening[SyncEnvClient[ActT, ObsT, StateT]]) -> BaseException | None:
        while (client := opening.client) is not None:
            try:
                client.connect()
            except Exception as exc:
                opening.refused(exc)
                continue
            opening.opened()
            return None
        return opening.failed()

    @staticmethod
    def _drop(slot: Slot[SyncEnvClient[ActT, ObsT, StateT]]) -> None:
        client, slot.client = slot.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def sessions_per_url(self) -> dict[str, int]:
        """How many of the pool's sessions each replica holds now."""
        return self.machine.sessions_per_url()

    # -- rounds ----------------------------------------------------------------------------

    def reset_all(
        self, *, seeds: Sequence[int | None] | None = None, **kwargs: Any
    ) -> list[StepResult[ObsT] | SlotError]:
        """Start a new episode in every slot; slots whose session is gone get a new one first."""
        slot_kwargs = core.per_slot_kwargs(self.size, kwargs, seeds)
        urls = self.placement.urls()
        self._open(self.machine.lost(urls), urls)
        avoid: set[str] = set()  # replicas that were full or gone, this round
        results = self._each(
            self._reset, self.slots, slot_kwargs, [urls] * self.size, [avoid] * self.size
        )
        return self.machine.finish_round(results)

    def step_all(self, actions: Sequence[ActT | None]) -> list[StepResult[ObsT] | SlotError | None]:
        """Step every slot with its action (``None`` skips the slot), all at once."""
        core.check_actions(actions, self.size)
        results = self._each(self._step, self.slots, actions)
        return self.machine.finish_round(results)

    # -- one slot ------------------------------------------------------------------------

    def reset(
        self, index: int, *, seed: int | None = None, **kwargs: Any
    ) -> StepResult[ObsT] | SlotError:
        """Start a new episode in slot ``index`` alone (see :meth:`EnvPool.reset`)."""
        slot = self.machine.slot(index)
        urls = self.placement.urls()
        if slot.needs_session_on(urls):
            self._open([slot], urls)
        result = self._reset(slot, core.reset_kwargs(kwargs, seed), urls, set())
        return self.machine.finish_slot(result)  # type: ignore[no-any-return]

    def step(self, index: int, action: ActT) -> StepResult[ObsT] | SlotError:
        """Step slot ``index`` alone (see :meth:`EnvPool.step`)."""
        result = self._step(self.machine.slot(index), action)
        return self.machine.finish_slot(result)  # type: ignore[no-any-return]

    def _reset(
        self,
        slot: Slot[SyncEnvClient[ActT, ObsT, StateT]],
        kwargs: dict[str, Any],
        urls: list[str],
        avoid: set[str],
    ) -> StepResult[ObsT] | SlotError:
        """Reset the slot's session; if its replica is full or gone, on another replica."""
        attempt = self.machine.reset_attempt(slot, urls, avoid)
        while (client := slot.client) is not None:
            try:
                result = client.reset(**kwargs)
            except Exception as exc:
                elsewhere = attempt.refused(exc)
                if elsewhere is None:
                    return self._failed(slot, exc)
                self._open([slot], elsewhere)
                continue
            return attempt.succeeded(result)  # type: ignore[no-any-return]
        return attempt.no_session()

    def _step(
        self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], action: ActT | None
    ) -> StepResult[ObsT] | SlotError | None:
        if not slot.takes(action):
            return slot.answer_without_server(action)
        assert slot.client is not None and action is not None
        try:
            return slot.client.step(action)
        except Exception as exc:
            return self._failed(slot, exc)

    def _failed(
        self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], exc: BaseException
    ) -> SlotError:
        failure = self.machine.failed(slot, exc)
        if self.machine.replaces(failure):
            self._open([slot], self.placement.urls())
            if slot.client is not None:
                with contextlib.suppress(Exception):
                    slot.client.reset()
                failure.replaced_by = slot.url  # listed in pool.replacements by the round
        return failure

    # -- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Close every session and the threads (the servers keep running)."""
        self._each(self._drop, self.slots)
        self._threads.shutdown(wait=True)

    def __enter__(self: Self) -> Self:
        try:
            return self.open()
        except BaseException:
            self.close()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
