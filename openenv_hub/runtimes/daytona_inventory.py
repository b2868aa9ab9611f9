"""The Daytona sandboxes this toolkit created (labelled ``openenv-hub=true``): listed with their
state, age, size and owner, and deleted, for ``openenv ps --daytona`` and ``openenv stop
--daytona``. Which Daytona comes from ``DAYTONA_API_KEY``, ``DAYTONA_API_URL`` and
``DAYTONA_TARGET`` (or the arguments).

Example:
    >>> for sandbox in list_sandboxes():  # doctest: +SKIP
    ...     print(sandbox.id, sandbox.state, sandbox.age_s, sandbox.source)

Layer: runtimes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from openenv_hub.runtimes._daytona_api import MANAGED_LABEL, OWNER_LABEL, DaytonaSettings
from openenv_hub.runtimes.base import Running, process_runs

__all__ = ["ManagedSandbox", "SandboxInventory", "delete_sandboxes", "list_sandboxes"]


@dataclass(frozen=True)
class ManagedSandbox:
    """A sandbox of this toolkit: its state, source, age, size and the process that owns it."""

    id: str
    state: str
    source: str
    age_s: float
    cpu: int
    memory_gib: int
    disk_gib: int
    auto_stop_minutes: float | None
    owner_pid: int | None

    @property
    def owner_alive(self) -> bool:
        """Whether the process that created it runs (on this machine) still."""
        return process_runs(self.owner_pid)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "owner_alive": self.owner_alive}


def _age_s(created_at: str | None) -> float:
    try:
        when = dt.datetime.fromisoformat(str(created_at).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (dt.datetime.now(dt.timezone.utc) - when).total_seconds())


def _managed(sandbox: Any) -> ManagedSandbox:
    tags = dict(sandbox.labels or {})
    owner = tags.get(OWNER_LABEL, "")
    pid = owner.split("-", 1)[0]
    return ManagedSandbox(
        id=str(sandbox.id), state=str(getattr(sandbox.state, "value", sandbox.state)),
        source=tags.get("openenv-hub-source", ""), age_s=_age_s(sandbox.created_at),
        cpu=sandbox.cpu, memory_gib=sandbox.memory, disk_gib=sandbox.disk,
        auto_stop_minutes=sandbox.auto_stop_interval, owner_pid=int(pid) if pid.isdigit() else None,
    )  # fmt: skip


def list_sandboxes(
    *, api_key: str | None = None, api_url: str | None = None, target: str | None = None
) -> list[ManagedSandbox]:
    """The sandboxes this toolkit created on that Daytona, newest first."""
    from daytona import ListSandboxesQuery

    client = DaytonaSettings.resolve(api_key, api_url, target).client()
    found = [_managed(s) for s in client.list(ListSandboxesQuery(labels={MANAGED_LABEL: "true"}))]
    return sorted(found, key=lambda sandbox: sandbox.age_s)


def delete_sandboxes(
    ids: Iterable[str] = (), *, everything: bool = False, api_key: str | None = None,
    api_url: str | None = None, target: str | None = None,
) -> list[ManagedSandbox]:  # fmt: skip
    """Delete the named sandboxes of this toolkit (ids, or prefixes of them), or all of them;
    return those deleted.

    Raises:
        LookupError: An id that names no sandbox of this toolkit (nothing is deleted then).
    """
    client = DaytonaSettings.resolve(api_key, api_url, target).client()
    known = list_sandboxes(api_key=api_key, api_url=api_url, target=target)
    wanted = list(ids)
    missing = [w for w in wanted if not any(sandbox.id.startswith(w) for sandbox in known)]
    if missing:
        raise LookupError(", ".join(missing))
    chosen = [s for s in known if everything or any(s.id.startswith(w) for w in wanted)]
    for sandbox in chosen:
        client.delete(client.get(sandbox.id))
    return chosen


class SandboxInventory:
    """The ``daytona`` runtime's sandboxes ($DAYTONA_API_KEY, $DAYTONA_API_URL; asked when
    named: ``openenv ps --daytona``, which shows their size too)."""

    lists = "Daytona sandboxes"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return False

    def running(self, *, address: str | None = None) -> list[Running]:
        return [
            Running(
                kind="sandbox", id=box.id, name=box.id, runtime="daytona", status=box.state,
                url="", source=box.source, owner_pid=box.owner_pid,
            )
            for box in list_sandboxes()
        ]  # fmt: skip

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        delete_sandboxes([item.id for item in items])
