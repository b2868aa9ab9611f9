"""What :class:`EnvPool` and :class:`SyncEnvPool` share and that does no I/O: where the replicas
are, which replica gets the next session, and how a round of per-slot results is finished.

A session goes to the replica that holds the fewest of the pool's sessions (ties: the order of
the URLs); a replica that refused a connection in the current round is tried last.
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

__all__ = ["ON_ERROR", "OnError", "Placement", "Slot", "finish_round", "slot_failure"]

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

    def client_options(self, given: dict[str, Any]) -> dict[str, Any]:
        """The options of each session's client: ``given``, with the headers the provider's
        servers want (a token its proxy checks) unless ``given`` names its own."""
        wanted = provider_headers(self.provider)
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
    """Whether a failed reset is tried again on another replica: this one is full or gone
    (a reset starts a new episode, so nothing is lost by moving)."""
    return isinstance(exc, (SessionCapacityError, TransportError, SessionError))


def finish_round(
    results: Sequence[Any], on_error: OnError, replacements: list[SlotError]
) -> list[Any]:
    """The results of one round, or :class:`PoolError` when the policy is to raise. The round's
    replaced sessions are added to ``replacements`` in slot order (not in the order the
    concurrent calls finished)."""
    out = list(results)
    replacements.extend(r for r in out if isinstance(r, SlotError) and r.replaced_by is not None)
    if on_error == "raise" and any(isinstance(r, SlotError) for r in out):
        raise PoolError(out)
    return out


def finish_slot(result: Any, on_error: OnError, replacements: list[SlotError]) -> Any:
    """:func:`finish_round` for a call on one slot: its result, or :class:`PoolError`."""
    return finish_round([result], on_error, replacements)[0]


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


def check_index(index: int, size: int) -> int:
    if not 0 <= index < size:
        raise ConfigurationError(
            f"Slot {index} is not in this pool: its slots are 0 to {size - 1}."
        )
    return index


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


def no_replica(urls: Sequence[str], errors: Sequence[BaseException]) -> OpenEnvError:
    """Why no session could be opened on any replica."""
    from openenv_hub.errors import ConnectError

    if not urls:
        return ConnectError("The provider reports no replica running.")
    if errors and isinstance(errors[-1], OpenEnvError):
        return errors[-1]
    return ConnectError(f"No replica accepted a session: {', '.join(map(shown, urls))}")


def after_open(opened: Callable[[], int], size: int, first_error: BaseException | None) -> None:
    """Opening a pool where not a single session opened raises that error (a wrong URL)."""
    if opened() == 0 and first_error is not None:
        raise first_error
