"""``EnvPool``: many sessions of one environment, spread over its replicas, driven together.

A training loop that runs a batch of episodes opens one pool and calls ``reset_all()`` and
``step_all(actions)``; each call runs every slot's request at once and returns the results in
slot order::

    async with EnvPool(provider, size=64) as pool:        # or a URL, or a list of URLs
        results = await pool.reset_all(seeds=range(64))
        results = await pool.step_all([policy(r) for r in results])

Loops that act on each environment as soon as its own result is in (asynchronous rollouts, where
a slow episode holds up nobody) use ``reset(i)`` and ``step(i, action)`` on one slot instead.

A slot whose session fails (its replica died, the connection dropped) does not stop the others:
``results[i]`` is a :class:`~openenv_hub.errors.SlotError` carrying the client's typed error,
and the slot answers with that error until the next ``reset_all()``, which opens a new session
for it on the replica that holds the fewest of the pool's sessions. ``on_error="raise"`` raises
:class:`~openenv_hub.errors.PoolError` (holding every result) instead; ``on_error="replace"``
opens the new session at once and names it in the error's ``replaced_by``.

Layer: client.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import openenv_hub.client._pool_core as core
from openenv_hub.client._core import ActT, ObsT, StateT
from openenv_hub.client._pool_core import OnError, Opening, Placement, Slot, SlotMachine
from openenv_hub.client.generic import GenericEnvClient
from openenv_hub.errors import SlotError

if TYPE_CHECKING:
    from openenv_hub.client.env_client import EnvClient
    from openenv_hub.client.sync_pool import SyncEnvPool
    from openenv_hub.runtimes import Provider
    from openenv_hub.types import StepResult

__all__ = ["EnvPool"]

Self = TypeVar("Self", bound="EnvPool[Any, Any, Any]")


class EnvPool(Generic[ActT, ObsT, StateT]):
    """``size`` sessions over the servers at ``urls_or_provider``, stepped together.

    Args:
        urls_or_provider: A server URL, a list of replica URLs, or a running provider (its
            ``base_urls`` are read again whenever sessions are opened, so a replica that was
            restarted elsewhere is found).
        size: Number of sessions (slots).
        client: The client class of each session (default :class:`GenericEnvClient`: dicts).
        on_error: ``"return"`` (a :class:`SlotError` in the failed slot's result), ``"raise"``
            (:class:`PoolError` once every slot has answered) or ``"replace"`` (like
            ``"return"``, and a new session is opened for the slot at once).
        **client_options: Passed to every client (``message_timeout_s``, ...).
    """

    def __init__(
        self,
        urls_or_provider: str | Sequence[str] | Provider,
        size: int = 64,
        *,
        client: type[EnvClient[ActT, ObsT, StateT]] | None = None,
        on_error: OnError = "return",
        **client_options: Any,
    ) -> None:
        self.client_class: type[EnvClient[Any, Any, Any]] = client or GenericEnvClient
        self.machine: SlotMachine[EnvClient[ActT, ObsT, StateT]] = SlotMachine(
            size, Placement.of(urls_or_provider), on_error, self._new_client
        )
        self.size, self.on_error, self.placement = size, on_error, self.machine.placement
        self.slots, self.replacements = self.machine.slots, self.machine.replacements
        self.client_options = client_options

    def _new_client(self, url: str) -> EnvClient[ActT, ObsT, StateT]:
        return self.client_class(url, **self.placement.client_options(self.client_options, url))

    # -- sessions --------------------------------------------------------------------------

    async def open(self: Self) -> Self:
        """Open every slot's session (done by ``async with`` and the first ``reset_all``).

        Raises:
            OpenEnvError: Not a single session could be opened (the first slot's error).
        """
        failures = await self._open(self.slots, await self._urls())
        first = next((f for f in failures if f is not None), None)
        core.after_open(sum(s.client is not None for s in self.slots), first)
        return self

    async def _urls(self) -> list[str]:
        if self.placement.provider is None:
            return self.placement.urls()
        return await asyncio.to_thread(self.placement.urls)

    async def _open(
        self, slots: Sequence[Slot[EnvClient[ActT, ObsT, StateT]]], urls: list[str]
    ) -> list[BaseException | None]:
        """New sessions for ``slots``: their old ones dropped, all placed, then connected."""
        await asyncio.gather(*(self._drop(slot) for slot in slots))
        openings = [self.machine.opening(slot, urls) for slot in slots]
        return list(await asyncio.gather(*(self._connect(opening) for opening in openings)))

    @staticmethod
    async def _connect(opening: Opening[EnvClient[ActT, ObsT, StateT]]) -> BaseException | None:
        while (client := opening.client) is not None:
            try:
                await client.connect()
            except Exception as exc:
                opening.refused(exc)
                continue
            opening.opened()
            return None
        return opening.failed()

    @staticmethod
    async def _drop(slot: Slot[EnvClient[ActT, ObsT, StateT]]) -> None:
        client, slot.client = slot.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.close(), 5.0)

    def sessions_per_url(self) -> dict[str, int]:
        """How many of the pool's sessions each replica holds now."""
        return self.machine.sessions_per_url()

    # -- rounds ----------------------------------------------------------------------------

    async def reset_all(
        self, *, seeds: Sequence[int | None] | None = None, **kwargs: Any
    ) -> list[StepResult[ObsT] | SlotError]:
        """Start a new episode in every slot; slots whose session is gone get a new one first.

        ``seeds`` (one per slot) and ``kwargs`` go to each slot's ``reset``.
        """
        slot_kwargs = core.per_slot_kwargs(self.size, kwargs, seeds)
        urls = await self._urls()
        await self._open(self.machine.lost(urls), urls)
        avoid: set[str] = set()  # replicas that were full or gone, this round
        results = await asyncio.gather(
            *(self._reset(slot, slot_kwargs[slot.index], urls, avoid) for slot in self.slots)
        )
        return self.machine.finish_round(results)

    async def step_all(
        self, actions: Sequence[ActT | None]
    ) -> list[StepResult[ObsT] | SlotError | None]:
        """Step every slot with its action (``None`` skips the slot), all at once."""
        core.check_actions(actions, self.size)
        results = await asyncio.gather(
            *(self._step(slot, action) for slot, action in zip(self.slots, actions, strict=True))
        )
        return self.machine.finish_round(results)

    # -- one slot ------------------------------------------------------------------------

    async def reset(
        self, index: int, *, seed: int | None = None, **kwargs: Any
    ) -> StepResult[ObsT] | SlotError:
        """Start a new episode in slot ``index`` alone (a new session first if it lost its own).

        Errors follow the pool's policy, as in :meth:`reset_all`. One call at a time per slot.
        """
        slot = self.machine.slot(index)
        urls = await self._urls()
        if slot.needs_session_on(urls):
            await self._open([slot], urls)
        result = await self._reset(slot, core.reset_kwargs(kwargs, seed), urls, set())
        return self.machine.finish_slot(result)  # type: ignore[no-any-return]

    async def step(self, index: int, action: ActT) -> StepResult[ObsT] | SlotError:
        """Step slot ``index`` alone, without waiting for the other slots.

        Errors follow the pool's policy, as in :meth:`step_all`. One call at a time per slot.
        """
        result = await self._step(self.machine.slot(index), action)
        return self.machine.finish_slot(result)  # type: ignore[no-any-return]

    async def _reset(
        self,
        slot: Slot[EnvClient[ActT, ObsT, StateT]],
        kwargs: dict[str, Any],
        urls: list[str],
        avoid: set[str],
    ) -> StepResult[ObsT] | SlotError:
        """Reset the slot's session; if its replica is full or gone, on another replica."""
        attempt = self.machine.reset_attempt(slot, urls, avoid)
        while (client := slot.client) is not None:
            try:
                result = await client.reset(**kwargs)
            except Exception as exc:
                elsewhere = attempt.refused(exc)
                if elsewhere is None:
                    return await self._failed(slot, exc)
                await self._open([slot], elsewhere)
                continue
            return attempt.succeeded(result)  # type: ignore[no-any-return]
        return attempt.no_session()

    async def _step(
        self, slot: Slot[EnvClient[ActT, ObsT, StateT]], action: ActT | None
    ) -> StepResult[ObsT] | SlotError | None:
        if not slot.takes(action):
            return slot.answer_without_server(action)
        assert slot.client is not None and action is not None
        try:
            return await slot.client.step(action)
        except Exception as exc:
            return await self._failed(slot, exc)

    async def _failed(
        self, slot: Slot[EnvClient[ActT, ObsT, StateT]], exc: BaseException
    ) -> SlotError:
        failure = self.machine.failed(slot, exc)
        if self.machine.replaces(failure):
            await self._open([slot], await self._urls())
            if slot.client is not None:
                with contextlib.suppress(Exception):
                    await slot.client.reset()
                failure.replaced_by = slot.url  # listed in pool.replacements by the round
        return failure

    # -- lifetime --------------------------------------------------------------------------

    async def close(self) -> None:
        """Close every session (the servers keep running: the pool does not own them)."""
        await asyncio.gather(*(self._drop(slot) for slot in self.slots))

    async def __aenter__(self: Self) -> Self:
        try:
            return await self.open()
        except BaseException:
            await asyncio.shield(self.close())
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def sync(self) -> SyncEnvPool[ActT, ObsT, StateT]:
        """A synchronous twin of this pool (same servers, size, client and policy)."""
        from openenv_hub.client.sync_pool import SyncEnvPool

        source = self.placement.provider or self.placement.fixed_urls
        return SyncEnvPool(
            source,
            self.size,
            client=self.client_class,
            on_error=self.on_error,
            **self.client_options,
        )
