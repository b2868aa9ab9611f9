"""The slots of a pool and every decision about them, without I/O: :class:`SlotMachine`, which
:class:`EnvPool` (asyncio) and :class:`SyncEnvPool` (threads) both drive. It says where a session
goes, what a refused connection or a failed reset does next, what a slot answers without asking
its server, and how a round of results ends; the pools connect, reset, step and close what it
names, each in its own way.

A session goes to the replica that holds the fewest of the pool's sessions (ties: the order of
the URLs). A connection a replica refuses is tried on the next such replica among those not yet
tried; a reset a replica refuses because it is full or gone starts over on another replica.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from openenv_hub.client._core import provider_headers
from openenv_hub.errors import (
    ConfigurationError,
    ConnectError,
    OpenEnvError,
    PoolError,
    SessionCapacityError,
    SessionError,
    SlotError,
    TransportError,
)
from openenv_hub.shown_urls import shown

if TYPE_CHECKING:
    from openenv_hub.runtimes import Provider

__all__ = ["ON_ERROR", "OnError", "Opening", "Placement", "ResetAttempt", "Slot", "SlotMachine"]

logger = logging.getLogger("openenv_hub.pool")

OnError = Literal["return", "raise", "replace"]
ON_ERROR: tuple[str, ...] = ("return", "raise", "replace")

ClientT = TypeVar("ClientT")


@dataclass
class Slot(Generic[ClientT]):
    """One session of the pool: its client, the replica it is on, and whether it failed."""

    index: int
    url: str = ""
    client: ClientT | None = None
    failure: SlotError | None = None

    @property
    def needs_session(self) -> bool:
        """No session, or one that is gone: the next reset opens a new one."""
        return self.client is None or (self.failure is not None and self.failure.session_lost)

    def needs_session_on(self, urls: Sequence[str]) -> bool:
        """As :attr:`needs_session`, or its replica is no longer among ``urls``."""
        return self.needs_session or self.url not in urls

    def takes(self, action: Any) -> bool:
        """Whether a step with ``action`` goes to the slot's server (``None`` skips the slot;
        a slot whose session is gone answers with its failure)."""
        return action is not None and not self.needs_session

    def answer_without_server(self, action: Any) -> SlotError | None:
        """What a step the server does not take answers: nothing, or the slot's failure."""
        if action is None:
            return None
        assert self.failure is not None, "a slot with no session has a failure"
        return self.failure


@dataclass
class Placement:
    """Where sessions go: the replicas' URLs (read from a provider each round when there is one)
    and the count of the pool's sessions on each."""

    fixed_urls: list[str] = field(default_factory=list)
    provider: Provider | None = None

    @classmethod
    def of(cls, urls_or_provider: str | Sequence[str] | Provider) -> Placement:
        if isinstance(urls_or_provider, str):
            return cls(fixed_urls=[urls_or_provider])
        if isinstance(urls_or_provider, Sequence):
            urls = [str(url) for url in urls_or_provider]
            if not urls:
                raise ConfigurationError("EnvPool needs at least one server URL.")
            return cls(fixed_urls=urls)
        if hasattr(urls_or_provider, "base_urls"):
            return cls(provider=urls_or_provider)
        raise ConfigurationError(
            f"EnvPool takes a URL, a list of URLs or a provider, not {type(urls_or_provider).__name__}."
        )

    def client_options(self, given: dict[str, Any], url: str) -> dict[str, Any]:
        """The options of a session's client on the replica at ``url``: ``given``, with the
        headers that replica wants (a token its proxy checks) unless ``given`` names its own."""
        wanted = provider_headers(self.provider, url)
        return {"headers": wanted, **given} if wanted else dict(given)

    def urls(self) -> list[str]:
        """The replicas now (a provider may have restarted one elsewhere)."""
        if self.provider is None:
            return list(self.fixed_urls)
        return list(self.provider.base_urls)

    @staticmethod
    def candidates(
        urls: Sequence[str], loads: Counter[str], refused: Iterable[str] = ()
    ) -> list[str]:
        """``urls`` in the order to try: fewest sessions first; those that refused last."""
        refused = set(refused)
        order = {url: i for i, url in enumerate(urls)}
        return sorted(urls, key=lambda url: (url in refused, loads[url], order[url]))

    @staticmethod
    def loads(slots: Iterable[Slot[Any]]) -> Counter[str]:
        return Counter(slot.url for slot in slots if slot.client is not None and slot.url)


class SlotMachine(Generic[ClientT]):
    """The slots of one pool, and what happens to them (see the module's docstring).

    Args:
        size: Number of slots.
        placement: Where the replicas are.
        on_error: The pool's policy for a failed slot.
        new_client: Makes the (not yet connected) client of a session on a replica's URL.
    """

    def __init__(
        self,
        size: int,
        placement: Placement,
        on_error: OnError,
        new_client: Callable[[str], ClientT],
    ) -> None:
        check_options(size, on_error)
        self.slots: list[Slot[ClientT]] = [Slot(i) for i in range(size)]
        self.placement = placement
        self.on_error: OnError = on_error
        self.new_client = new_client
        self.replacements: list[SlotError] = []

    def slot(self, index: int) -> Slot[ClientT]:
        """Slot ``index``, or a ConfigurationError naming the slots there are."""
        if not 0 <= index < len(self.slots):
            raise ConfigurationError(
                f"Slot {index} is not in this pool: its slots are 0 to {len(self.slots) - 1}."
            )
        return self.slots[index]

    def lost(self, urls: Sequence[str]) -> list[Slot[ClientT]]:
        """The slots whose next reset needs a new session on one of ``urls``."""
        return [slot for slot in self.slots if slot.needs_session_on(urls)]

    def sessions_per_url(self) -> dict[str, int]:
        return dict(Placement.loads(self.slots))

    # -- opening ---------------------------------------------------------------------------

    def opening(self, slot: Slot[ClientT], urls: Sequence[str]) -> Opening[ClientT]:
        """Place ``slot``'s new session (its old client already dropped) on the least-loaded of
        ``urls``. Opening every slot's placement before connecting any spreads them evenly."""
        return Opening(self, slot, urls)

    def place(self, slot: Slot[ClientT], urls: Sequence[str], tried: Iterable[str]) -> None:
        """Give ``slot`` a new client on the least-loaded of ``urls`` not ``tried`` (none left:
        no client)."""
        tried = set(tried)
        slot.client = None  # its own replica does not count against the choice
        left = [
            u for u in Placement.candidates(urls, Placement.loads(self.slots)) if u not in tried
        ]
        slot.url = left[0] if left else ""
        slot.client = self.new_client(slot.url) if left else None

    # -- resetting, failing, and a round's end ---------------------------------------------

    def reset_attempt(
        self, slot: Slot[ClientT], urls: Sequence[str], avoid: set[str]
    ) -> ResetAttempt[ClientT]:
        """A reset of ``slot``; ``avoid`` collects the replicas that refused one this round."""
        return ResetAttempt(slot, urls, avoid)

    def failed(self, slot: Slot[ClientT], exc: BaseException) -> SlotError:
        """Record ``exc`` as the slot's failure (an error that is not openenv's is a bug: it is
        raised)."""
        return slot_failure(slot, exc)

    def replaces(self, failure: SlotError) -> bool:
        """Whether the slot gets a new session at once (``on_error="replace"``)."""
        return self.on_error == "replace" and failure.session_lost

    def finish_round(self, results: Sequence[Any]) -> list[Any]:
        """The results of a round, or :class:`PoolError` when the policy is to raise. Replaced
        sessions are listed in ``replacements`` in slot order."""
        out = list(results)
        self.replacements.extend(r for r in out if isinstance(r, SlotError) and r.replaced_by)
        if self.on_error == "raise" and any(isinstance(r, SlotError) for r in out):
            raise PoolError(out)
        return out

    def finish_slot(self, result: Any) -> Any:
        """:meth:`finish_round` for a call on one slot: its result, or :class:`PoolError`."""
        return self.finish_round([result])[0]


class Opening(Generic[ClientT]):
    """One slot's way to a session: its client to connect (:attr:`client`), placed again on
    the next replica after each refusal, until one accepts or none is left."""

    def __init__(self, machine: SlotMachine[ClientT], slot: Slot[ClientT], urls: Sequence[str]):
        self.machine, self.slot, self.urls = machine, slot, list(urls)
        self.refusals: list[tuple[str, BaseException]] = []
        machine.place(slot, self.urls, ())

    @property
    def client(self) -> ClientT | None:
        """The client to connect now; ``None`` when every replica refused."""
        return self.slot.client

    def refused(self, exc: BaseException) -> None:
        """The replica refused the connection: place the slot on the next one."""
        self.refusals.append((self.slot.url, exc))
        self.machine.place(self.slot, self.urls, (url for url, _ in self.refusals))

    def opened(self) -> None:
        """The session is open; refusals on the way are logged."""
        self.slot.failure = None
        note_refusals(self.slot, self.refusals)

    def failed(self) -> OpenEnvError:
        """No replica accepted: the slot's failure, and the error to report."""
        error = no_replica(self.urls, [exc for _, exc in self.refusals])
        slot_failure(self.slot, error)
        return error


class ResetAttempt(Generic[ClientT]):
    """One reset of one slot, moved to another replica when its own is full or gone."""

    def __init__(self, slot: Slot[ClientT], urls: Sequence[str], avoid: set[str]) -> None:
        self.slot, self.urls, self.avoid = slot, urls, avoid
        self.refusals: list[tuple[str, BaseException]] = []

    def refused(self, exc: BaseException) -> list[str] | None:
        """The reset failed: the replicas to open the slot's session on next, or ``None`` when
        the failure is the slot's (a reset starts a new episode, so moving loses nothing)."""
        others = [url for url in self.urls if url not in self.avoid | {self.slot.url}]
        if not (moves_on(exc) and others):
            return None
        self.avoid.add(self.slot.url)
        self.refusals.append((self.slot.url, exc))
        return others

    def succeeded(self, result: Any) -> Any:
        self.slot.failure = None
        note_refusals(self.slot, self.refusals)
        return result

    def no_session(self) -> SlotError:
        """The slot has no session to reset: its failure."""
        return self.slot.failure or slot_failure(self.slot, no_replica([], []))


def slot_failure(slot: Slot[Any], exc: BaseException) -> SlotError:
    """Record ``exc`` as the failure of ``slot``; non-openenv errors (bugs) are not slot errors."""
    if not isinstance(exc, OpenEnvError):
        raise exc
    failure = SlotError(slot.index, slot.url, exc)
    slot.failure = failure
    logger.warning("%s", failure)
    return failure


def note_refusals(slot: Slot[Any], refusals: Sequence[tuple[str, BaseException]]) -> None:
    """Log each replica that refused ``slot`` a session before the one at ``slot.url`` took it
    (the pool moves on by itself; the log says where sessions went, and why)."""
    for url, exc in refusals:
        logger.warning(
            "Slot %d: %s refused a session (%s), so it was opened on %s",
            slot.index, shown(url), exc, shown(slot.url),
        )  # fmt: skip


def moves_on(exc: BaseException) -> bool:
    """Whether a failed reset is tried again on another replica: this one is full or gone."""
    return isinstance(exc, (SessionCapacityError, TransportError, SessionError))


def no_replica(urls: Sequence[str], errors: Sequence[BaseException]) -> OpenEnvError:
    """Why no session could be opened on any replica."""
    if not urls:
        return ConnectError("The provider reports no replica running.")
    if errors and isinstance(errors[-1], OpenEnvError):
        return errors[-1]
    return ConnectError(f"No replica accepted a session: {', '.join(map(shown, urls))}")


def check_options(size: int, on_error: str) -> None:
    if size < 1:
        raise ConfigurationError(f"EnvPool size must be at least 1, not {size}.")
    if on_error not in ON_ERROR:
        raise ConfigurationError(
            f"on_error={on_error!r} is not a policy; use one of {', '.join(ON_ERROR)}."
        )


def check_actions(actions: Sequence[Any], size: int) -> None:
    if len(actions) != size:
        raise ConfigurationError(
            f"step_all got {len(actions)} actions for a pool of {size} slots; pass one per slot "
            "(None skips a slot)."
        )


def reset_kwargs(kwargs: dict[str, Any], seed: int | None) -> dict[str, Any]:
    return {**kwargs, "seed": seed} if seed is not None else dict(kwargs)


def per_slot_kwargs(
    size: int, kwargs: dict[str, Any], seeds: Sequence[int | None] | None
) -> list[dict[str, Any]]:
    """The keyword arguments of each slot's ``reset``: ``kwargs`` plus its seed, if any."""
    if seeds is None:
        return [dict(kwargs) for _ in range(size)]
    if len(seeds) != size:
        raise ConfigurationError(f"reset_all got {len(seeds)} seeds for a pool of {size} slots.")
    return [reset_kwargs(kwargs, seed) for seed in seeds]


def after_open(opened: int, first_error: BaseException | None) -> None:
    """Opening a pool where not a single session opened raises that error (a wrong URL)."""
    if opened == 0 and first_error is not None:
        raise first_error
