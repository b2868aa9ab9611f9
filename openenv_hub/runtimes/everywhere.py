"""What every runtime started, whichever process started it: listed and stopped through the
registry, each runtime's servers by its inventory (``openenv ps``, ``openenv stop``).

Plain :func:`list_running` asks the inventories that look at this machine (server processes,
the Docker engine) and a Ray cluster when one is known; the others (Jobs, Daytona, a Kubernetes
cluster) are asked when their runtime is named. An inventory that cannot be asked (its package
is not installed, nothing answers) leaves its line in :attr:`Listing.unasked`, and the others
are listed all the same.

Example:
    >>> listing = list_running()  # doctest: +SKIP
    >>> [item.name for item in listing.items], listing.unasked  # doctest: +SKIP
    (['local-4242'], ["containers and Swarm services (docker, swarm): ... needs the 'docker' ..."])

Layer: runtimes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from openenv_hub.errors import OpenEnvError
from openenv_hub.runtimes.base import Inventory, Running
from openenv_hub.runtimes.registry import get_runtime, inventory_of, runtime_names

__all__ = ["Listing", "NotListed", "inventories", "list_running", "remove_running"]


@dataclass
class Listing:
    """What runs (in the inventories' order), and one line for each inventory that could not be
    asked: what it lists, for which runtimes, and why (with what to do)."""

    items: list[Running] = field(default_factory=list)
    unasked: list[str] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)  # what each inventory asked lists


def inventories(runtimes: Iterable[str] | None = None) -> list[tuple[Inventory, list[str]]]:
    """Each inventory of ``runtimes`` (every registered runtime when None), once, with the
    runtimes whose servers it lists."""
    by_entry: dict[str, tuple[Inventory, list[str]]] = {}
    for name in runtime_names() if runtimes is None else list(runtimes):
        entry = get_runtime(name).inventory
        if not entry:
            continue  # starts nothing to stop (the space runtime: its app runs on the Hub)
        if entry not in by_entry:
            found = inventory_of(name)
            assert found is not None
            by_entry[entry] = (found, [])
        by_entry[entry][1].append(name)
    return list(by_entry.values())


def _asked(
    runtimes: Iterable[str] | None, also: Iterable[str], address: str | None
) -> list[tuple[Inventory, list[str], bool]]:
    """The inventories to ask, each with its runtimes and whether one of them was named (its
    failure is then an error, not a line)."""
    named = set(also) | set(runtimes or ())
    chosen = (
        inventories([*runtimes, *also])
        if runtimes is not None
        else [
            (inventory, names)
            for inventory, names in inventories()
            if inventory.asked_by_default(address=address) or named & set(names)
        ]
    )
    return [(inventory, names, bool(named & set(names))) for inventory, names in chosen]


def list_running(
    runtimes: Iterable[str] | None = None,
    *,
    also: Iterable[str] = (),
    address: str | None = None,
) -> Listing:
    """What the runtimes ``runtimes`` started (None: those of this machine and of a known Ray
    cluster), and those of ``also``; ``address``: the cluster to ask, for the runtimes that have
    one.

    Raises:
        OpenEnvError: The inventory of a runtime named (in ``runtimes`` or ``also``) could not
            be asked; another's failure is a line of :attr:`Listing.unasked`.
    """
    listing = Listing()
    for inventory, names, named in _asked(runtimes, also, address):
        try:
            listing.items += inventory.running(address=address)
        except OpenEnvError as exc:
            if named:
                raise
            listing.unasked.append(_unasked(inventory, names, exc))
            continue
        listing.asked.append(inventory.lists)
    return listing


class NotListed(LookupError):
    """Names that match nothing listed; ``unasked``: the inventories that could not be asked."""

    def __init__(self, names: list[str], unasked: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names
        self.unasked = unasked


def _unasked(inventory: Inventory, runtimes: list[str], exc: OpenEnvError) -> str:
    """One line: what could not be listed, for which runtimes, and why."""
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    why += f" {exc.hint}" if exc.hint and exc.hint not in why else ""
    return f"{inventory.lists} ({', '.join(runtimes)}): {why}"


def _matches(item: Running, wanted: str) -> bool:
    """By name, id prefix, or (Ray replicas) the name of the deployment they belong to."""
    group = item.name.rpartition("-r")[0] if item.kind == "actor" else None
    return item.name == wanted or item.id.startswith(wanted) or group == wanted


def remove_running(
    names: Iterable[str] = (),
    *,
    everything: bool = False,
    runtimes: Iterable[str] | None = None,
    also: Iterable[str] = (),
    address: str | None = None,
) -> tuple[list[Running], Listing]:
    """Stop the named servers (name or id prefix; a Ray deployment's name stops all its
    replicas), or all of them, among those :func:`list_running` finds; return those, and the
    listing they were found in.

    Raises:
        NotListed: A name that matches nothing listed (nothing is stopped then).
        OpenEnvError: As :func:`list_running`.
    """
    wanted = list(names)
    listing = Listing()
    chosen_by: list[tuple[Inventory, list[Running]]] = []
    for inventory, names_of, named in _asked(runtimes, also, address):
        try:
            items = inventory.running(address=address)
        except OpenEnvError as exc:
            if named:
                raise
            listing.unasked.append(_unasked(inventory, names_of, exc))
            continue
        listing.items += items
        chosen = items if everything else [i for i in items if any(_matches(i, w) for w in wanted)]
        chosen_by.append((inventory, chosen))
    missing = [w for w in wanted if not any(_matches(i, w) for i in listing.items)]
    if missing and not everything:
        raise NotListed(missing, listing.unasked)
    removed: list[Running] = []
    for inventory, chosen in chosen_by:
        if chosen:
            inventory.remove(chosen, address=address)
            removed += chosen
    return removed, listing
