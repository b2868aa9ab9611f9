"""A runtime of another package with an inventory of its own, registered by ``"module:Class"``
(``register("listed_runtime", "listed_runtime:ListedRuntime")``): what it "started" is a list
kept here, which ``openenv ps`` must list and ``openenv stop`` must empty through the registry
alone."""

from __future__ import annotations

from collections.abc import Sequence

from openenv_hub.runtimes import Running, RuntimeBase

STARTED: list[Running] = []
REMOVED: list[str] = []


def server(name: str) -> Running:
    return Running(
        kind="thing", id=f"id-{name}", name=name, runtime="listed_runtime", status="up",
        url=f"http://127.0.0.1:1/{name}", source="a test", owner_pid=None,
    )  # fmt: skip


class ListedRuntime(RuntimeBase):
    name = "listed_runtime"
    summary = "what a test says it started (a test runtime)"
    inventory = "listed_runtime:ListedInventory"
    options = {"image": frozenset()}


class ListedInventory:
    lists = "things of a test"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return True

    def running(self, *, address: str | None = None) -> list[Running]:
        return list(STARTED)

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        for item in items:
            STARTED.remove(item)
            REMOVED.append(item.name)
