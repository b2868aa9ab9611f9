"""``SyncEnvPool``: the synchronous twin of :class:`~openenv_hub.client.pool.EnvPool`.

Same methods, same placement and error policies; the slots' requests run at once on a pool of
threads (one per slot, up to ``max_threads``), each slot a
:class:`~openenv_hub.client.SyncEnvClient`::

    with EnvPool("http://127.0.0.1:8000", size=8).sync() as pool:
        results = pool.reset_all()
        results = pool.step_all([{"message": "hi"}] * 8)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from openenv_hub.client import _pool_core as core
from openenv_hub.client._core import ActT, ObsT, StateT
from openenv_hub.client._pool_core import OnError, Placement, Slot
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
        core.check_options(size, on_error)
        self.size = size
        self.on_error: OnError = on_error
        self.placement = Placement.of(urls_or_provider)
        self.client_class: type[EnvClient[Any, Any, Any]] = client or GenericEnvClient
        self.client_options = self.placement.client_options(client_options)
        self.slots: list[Slot[SyncEnvClient[ActT, ObsT, StateT]]] = [Slot(i) for i in range(size)]
        self.replacements: list[SlotError] = []
        self._threads = ThreadPoolExecutor(
            max_workers=max_threads or min(size, 64), thread_name_prefix="openenv-pool"
        )

    def _each(self, function: Callable[..., T], *columns: Sequence[Any]) -> list[T]:
        """``function`` over the columns' rows, at once on the threads; results in order."""
        return list(self._threads.map(function, *columns))

    # -- sessions --------------------------------------------------------------------------

    def open(self: Self) -> Self:
        """Open every slot's session; raises when not a single one opens."""
        urls = self.placement.urls()
        for slot in self.slots:  # placed in order, so that the slots spread evenly
            self._place(slot, urls)
        failures = self._each(self._connect_slot, self.slots, [urls] * self.size)
        first = next((f for f in failures if f is not None), None)
        core.after_open(lambda: sum(s.client is not None for s in self.slots), self.size, first)
        return self

    def _place(self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], urls: list[str]) -> None:
        self._drop(slot)
        url = Placement.candidates(urls, Placement.loads(self.slots))[0] if urls else ""
        slot.url = url
        slot.client = self.client_class(url, **self.client_options).sync() if url else None

    def _connect_slot(
        self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], urls: list[str]
    ) -> BaseException | None:
        """Connect the placed session; on refusal, try the other replicas by load."""
        refusals: list[tuple[str, BaseException]] = []
        while slot.client is not None:
            try:
                slot.client.connect()
            except Exception as exc:
                refusals.append((slot.url, exc))
                slot.client = None
                tried = {url for url, _ in refusals}
                others = Placement.candidates(urls, Placement.loads(self.slots))
                others = [u for u in others if u not in tried]
                if others:
                    slot.url = others[0]
                    slot.client = self.client_class(slot.url, **self.client_options).sync()
                continue
            slot.failure = None
            core.note_refusals(slot, refusals)
            return None
        slot.url = ""
        error = core.no_replica(urls, [exc for _, exc in refusals])
        core.slot_failure(slot, error)
        return error

    def _open_slot(self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], urls: list[str]) -> None:
        self._place(slot, urls)
        self._connect_slot(slot, urls)

    @staticmethod
    def _drop(slot: Slot[SyncEnvClient[ActT, ObsT, StateT]]) -> None:
        client, slot.client = slot.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()

    def sessions_per_url(self) -> dict[str, int]:
        """How many of the pool's sessions each replica holds now."""
        return dict(Placement.loads(self.slots))

    # -- rounds ----------------------------------------------------------------------------

    def reset_all(
        self, *, seeds: Sequence[int | None] | None = None, **kwargs: Any
    ) -> list[StepResult[ObsT] | SlotError]:
        """Start a new episode in every slot; slots whose session is gone get a new one first."""
        slot_kwargs = core.per_slot_kwargs(self.size, kwargs, seeds)
        urls = self.placement.urls()
        lost = [slot for slot in self.slots if slot.needs_session_on(urls)]
        for slot in lost:
            self._place(slot, urls)
        self._each(self._connect_slot, lost, [urls] * len(lost))
        avoid: set[str] = set()  # replicas that were full or gone, this round
        results = self._each(
            self._reset, self.slots, slot_kwargs, [urls] * self.size, [avoid] * self.size
        )
        return core.finish_round(results, self.on_error, self.replacements)

    def step_all(self, actions: Sequence[ActT | None]) -> list[StepResult[ObsT] | SlotError | None]:
        """Step every slot with its action (``None`` skips the slot), all at once."""
        core.check_actions(actions, self.size)
        results = self._each(self._step, self.slots, actions)
        return core.finish_round(results, self.on_error, self.replacements)

    # -- one slot ------------------------------------------------------------------------

    def reset(
        self, index: int, *, seed: int | None = None, **kwargs: Any
    ) -> StepResult[ObsT] | SlotError:
        """Start a new episode in slot ``index`` alone (see :meth:`EnvPool.reset`)."""
        slot = self.slots[core.check_index(index, self.size)]
        urls = self.placement.urls()
        if slot.needs_session_on(urls):
            self._open_slot(slot, urls)
        result = self._reset(slot, core.reset_kwargs(kwargs, seed), urls, set())
        return core.finish_slot(result, self.on_error, self.replacements)  # type: ignore[no-any-return]

    def step(self, index: int, action: ActT) -> StepResult[ObsT] | SlotError:
        """Step slot ``index`` alone (see :meth:`EnvPool.step`)."""
        slot = self.slots[core.check_index(index, self.size)]
        result = self._step(slot, action)
        return core.finish_slot(result, self.on_error, self.replacements)  # type: ignore[no-any-return]

    def _reset(
        self,
        slot: Slot[SyncEnvClient[ActT, ObsT, StateT]],
        kwargs: dict[str, Any],
        urls: list[str],
        avoid: set[str],
    ) -> StepResult[ObsT] | SlotError:
        """Reset the slot's session; if its replica is full or gone, on another replica."""
        refusals: list[tuple[str, BaseException]] = []
        while slot.client is not None:
            try:
                result = slot.client.reset(**kwargs)
            except Exception as exc:
                others = [url for url in urls if url not in avoid | {slot.url}]
                if not (core.moves_on(exc) and others):
                    return self._failed(slot, exc)
                avoid.add(slot.url)
                refusals.append((slot.url, exc))
                self._open_slot(slot, others)
                continue
            slot.failure = None
            core.note_refusals(slot, refusals)
            return result
        return slot.failure or core.slot_failure(slot, core.no_replica([], []))

    def _step(
        self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], action: ActT | None
    ) -> StepResult[ObsT] | SlotError | None:
        if action is None:
            return None
        if slot.client is None or (slot.failure is not None and slot.failure.session_lost):
            assert slot.failure is not None
            return slot.failure
        try:
            return slot.client.step(action)
        except Exception as exc:
            return self._failed(slot, exc)

    def _failed(
        self, slot: Slot[SyncEnvClient[ActT, ObsT, StateT]], exc: BaseException
    ) -> SlotError:
        failure = core.slot_failure(slot, exc)
        if self.on_error == "replace" and failure.session_lost:
            self._open_slot(slot, self.placement.urls())
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
