"""``openenv serve ENV --ray [ADDRESS] --replicas N`` (the ``ray`` runtime): print where each
replica serves, report the replicas Ray restarts, and fail once none is left."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from openenv_hub_cli._utils import CommandError, console, err_console

if TYPE_CHECKING:
    from openenv_hub.runtimes import Provider

__all__ = ["watch_replicas"]


def watch_replicas(provider: Provider) -> None:
    """Print each replica and the provider's name; then report restarts until none is left."""
    for status in provider.replicas():
        console.print(
            f"[bold]Replica {status.index}[/]  {status.url}  (node {status.node_ip})",
            markup=True,
        )
    for line in provider.details():
        console.print(line, markup=False, highlight=False)
    console.print("Press Ctrl+C to stop.")
    _watch(provider)


def _watch(provider: Provider) -> None:
    """Report each restart Ray makes; fail once no replica is left."""
    shown = 0
    while True:
        statuses = provider.replicas()
        for event in provider.events[shown:]:
            err_console.print(event, markup=False, highlight=False)
        shown = len(provider.events)
        if statuses and all(status.state == "DEAD" for status in statuses):
            raise CommandError(
                "Every replica is gone: stopped ('openenv stop'), or dead more often than "
                "Ray restarts them (max_restarts).",
                hint="Serve again; 'ray logs' on the cluster shows why a replica died.",
            )
        time.sleep(1.0)
