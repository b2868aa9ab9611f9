"""The Jobs this toolkit ran (labelled ``openenv-hub=true``) in a namespace: listed with their
stage, age and cost so far, and cancelled, for ``openenv ps --jobs`` and ``openenv stop --jobs``.

Example:
    >>> for job in list_jobs():  # doctest: +SKIP
    ...     print(job.id, job.stage, job.age_s, job.cost_so_far_usd)

Layer: runtimes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from openenv_hub.runtimes.base import Running
from openenv_hub.runtimes.jobs import MANAGED_LABEL

__all__ = ["JobsInventory", "ManagedJob", "cancel_jobs", "list_jobs"]


@dataclass(frozen=True)
class ManagedJob:
    """A Job of this toolkit: its stage, URL, source, age, flavor and what it cost so far."""

    id: str
    stage: str
    url: str
    source: str
    flavor: str
    age_s: float
    hourly_usd: float | None
    cost_so_far_usd: float | None
    detached: bool

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _client(endpoint: str | None, token: str | None) -> Any:
    from openenv_hub.hub import JobsClient

    return JobsClient(endpoint=endpoint, token=token)


def list_jobs(*, endpoint: str | None = None, token: str | None = None) -> list[ManagedJob]:
    """The namespace's Jobs this toolkit ran, newest first."""
    client = _client(endpoint, token)
    prices: dict[str, float | None] = {}
    found = []
    for job in client.labelled({MANAGED_LABEL: "true"}):
        if job.flavor not in prices:
            prices[job.flavor] = client.hourly_cost_usd(job.flavor)
        hourly = prices[job.flavor]
        running_s = job.running_s if job.running_s is not None else job.age_s
        found.append(
            ManagedJob(
                id=job.id, stage=job.stage, url=job.urls[0] if job.urls else "",
                source=job.labels.get("openenv-hub-source", ""), flavor=job.flavor,
                age_s=job.age_s, hourly_usd=hourly,
                cost_so_far_usd=None if hourly is None else hourly * running_s / 3600,
                detached=job.labels.get("openenv-hub-owner") == "detached",
            )
        )  # fmt: skip
    return sorted(found, key=lambda job: job.age_s)


def cancel_jobs(
    ids: Iterable[str] = (),
    *,
    everything: bool = False,
    endpoint: str | None = None,
    token: str | None = None,
) -> list[ManagedJob]:
    """Cancel the named Jobs of this toolkit (ids, or prefixes of them), or all that still run;
    return those cancelled.

    Raises:
        LookupError: An id that names no Job of this toolkit (nothing is cancelled then).
    """
    client = _client(endpoint, token)
    known = list_jobs(endpoint=endpoint, token=token)
    wanted = list(ids)
    missing = [w for w in wanted if not any(job.id.startswith(w) for job in known)]
    if missing:
        raise LookupError(", ".join(missing))
    chosen = [
        job
        for job in known
        if job.stage in ("SCHEDULING", "RUNNING")
        and (everything or any(job.id.startswith(w) for w in wanted))
    ]
    for job in chosen:
        client.cancel(job.id)
    return chosen


class JobsInventory:
    """The ``jobs`` runtime's Jobs in your namespace (asked when named: ``openenv ps --jobs``;
    ``openenv ps --jobs`` shows their cost too)."""

    lists = "Hugging Face Jobs"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return False

    def running(self, *, address: str | None = None) -> list[Running]:
        return [
            Running(
                kind="job", id=job.id, name=job.id, runtime="jobs", status=job.stage,
                url=job.url, source=job.source, owner_pid=None,
            )
            for job in list_jobs()
        ]  # fmt: skip

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        cancel_jobs([item.id for item in items])
