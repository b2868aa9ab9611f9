"""The evaluation results pushed for an environment: the datasets that ``openenv eval
--space NS/NAME --push-to-hub`` tags with the Space (:func:`openenv_hub.eval.results_tag`),
each with the figures its card's ``openenv_eval`` holds, for a small leaderboard.

One environment costs one request (:meth:`~.listing.HubCatalog.datasets_tagged`: the newest
:data:`MAX_RESULTS` datasets with the tag, their cards expanded), waited for at most the Hub
bound of :class:`~.listing.HubCatalog`, and its answer is kept for ``ttl_s``: a page that is open and
ticking never asks the Hub again, however often it redraws.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openenv_hub.errors import HubError
from openenv_hub.eval.publish import results_tag

from .listing import HubCatalog

__all__ = ["MAX_RESULTS", "EvalResult", "Evaluations", "Leaderboard"]

#: Results shown for one environment: the newest ones.
MAX_RESULTS = 10


@dataclass(frozen=True)
class EvalResult:
    """One pushed evaluation, as a leaderboard row shows it.

    Attributes:
        repo_id: The results dataset.
        model: The model (or policy) evaluated.
        mean_return: The mean return of its rollouts.
        pass_at_1: Its pass@1.
        rollouts: How many rollouts it played.
        date: When it was evaluated (the card's date, else the dataset's last change).
        url: The dataset's page.
        complete: Whether the card says the run is complete: every rollout played, none failed
            on an infrastructure error (a card that does not say is not complete).
        errors: The rollouts that failed on infrastructure errors, as the card says.
        conditions: What must be equal for two runs' figures to be compared: the taskset's
            digest, the pass threshold and the turn limit (None where the card does not say).
    """

    repo_id: str
    model: str
    mean_return: float | None
    pass_at_1: float | None
    rollouts: int | None
    date: dt.date | None
    url: str
    complete: bool = False
    errors: int | None = None
    conditions: tuple[str | None, float | None, float | None] = (None, None, None)


@dataclass(frozen=True)
class Leaderboard:
    """The results of one environment, best pass@1 first; ``error`` says why there are none
    when the Hub failed. :attr:`ranked` are the ones a leaderboard ranks: complete runs played
    under the same conditions (taskset, pass threshold, turn limit: those of most complete runs,
    the newest's on a tie). The others are shown apart: complete runs under other conditions
    (:attr:`other_conditions`: their pass@1 measures something else), and runs pushed with
    ``--partial`` or cards that do not say (:attr:`incomplete`)."""

    results: tuple[EvalResult, ...] = ()
    error: str = ""

    @property
    def complete(self) -> tuple[EvalResult, ...]:
        return tuple(r for r in self.results if r.complete)

    @property
    def ranked(self) -> tuple[EvalResult, ...]:
        conditions = self._ranked_conditions()
        return tuple(r for r in self.complete if r.conditions == conditions)

    @property
    def other_conditions(self) -> tuple[EvalResult, ...]:
        conditions = self._ranked_conditions()
        return tuple(r for r in self.complete if r.conditions != conditions)

    @property
    def incomplete(self) -> tuple[EvalResult, ...]:
        return tuple(r for r in self.results if not r.complete)

    def _ranked_conditions(self) -> tuple[str | None, float | None, float | None] | None:
        complete = self.complete
        if not complete:
            return None
        counts = Counter(r.conditions for r in complete)
        newest = max(complete, key=lambda r: r.date or dt.date.min)
        return max(counts, key=lambda c: (counts[c], c == newest.conditions))


class Evaluations:
    """Leaderboards per environment, read through ``hub`` and cached for ``ttl_s``."""

    def __init__(
        self,
        hub: HubCatalog,
        *,
        ttl_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hub = hub
        self.ttl_s = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[float, Leaderboard]] = {}
        self._lock = threading.Lock()

    def of(self, repo_id: str) -> Leaderboard:
        """The leaderboard of the Space ``repo_id`` (from the cache while it is fresh)."""
        with self._lock:
            cached = self._cache.get(repo_id)
        if cached is not None and self._clock() - cached[0] < self.ttl_s:
            return cached[1]
        try:
            board = Leaderboard(tuple(self._read(repo_id)))
        except HubError as exc:
            board = Leaderboard(error=f"{exc.message or exc}")
        with self._lock:
            self._cache[repo_id] = (self._clock(), board)
        return board

    def cached(self, repo_id: str) -> Leaderboard | None:
        """The last leaderboard read for ``repo_id``, however old; None if none was (no Hub
        call: for a page's timer)."""
        with self._lock:
            cached = self._cache.get(repo_id)
        return cached[1] if cached is not None else None

    def _read(self, repo_id: str) -> list[EvalResult]:
        found = self.hub.datasets_tagged(results_tag(repo_id), limit=MAX_RESULTS)
        endpoint = self.hub.hub.endpoint
        rows = [_result(info, f"{endpoint}/datasets/{info.id}") for info in found]
        return sorted(rows, key=lambda r: (-(r.pass_at_1 or 0.0), -(r.mean_return or 0.0)))


def _result(info: Any, url: str) -> EvalResult:
    """A row from a dataset's listing; what its card lacks (or gets wrong) shows as unknown."""
    card = info.card_data
    figures = card.get("openenv_eval") if card is not None else None
    figures = figures if isinstance(figures, Mapping) else {}
    rollouts = _number(figures.get("rollouts"))
    errors = _number(figures.get("errors"))
    return EvalResult(
        repo_id=info.id,
        model=str(figures.get("model") or "unknown")[:200],
        mean_return=_number(figures.get("mean_return")),
        pass_at_1=_number(figures.get("pass_at_1")),
        rollouts=int(rollouts) if rollouts is not None else None,
        date=_date(figures.get("date")) or _date(info.last_modified),
        url=url,
        complete=figures.get("complete") is True and errors == 0,
        errors=int(errors) if errors is not None else None,
        conditions=(
            str(figures["taskset_digest"])[:200] if figures.get("taskset_digest") else None,
            _number(figures.get("pass_threshold")),
            _number(figures.get("max_turns")),
        ),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None
