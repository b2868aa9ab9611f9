"""``openenv serve ENV --ray [ADDRESS] --replicas N``: start the replicas on a Ray cluster,
print where each serves, report the replicas Ray restarts, and stop them all on Ctrl-C or
SIGTERM."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from openenv_hub_cli._utils import CommandError, console, err_console, serving_until_stopped

__all__ = ["serve_on_ray"]


def serve_on_ray(
    env_dir: Path,
    address: str | None,
    *,
    replicas: int,
    web: bool | None,
    max_sessions: int | None,
) -> None:
    from openenv_hub.runtimes.ray import RayProvider

    where = address or "$RAY_ADDRESS"
    console.print(f"Starting {replicas} replica(s) of {env_dir.name} on the Ray cluster {where}...")
    env = {"ENABLE_WEB_INTERFACE": "true" if web else "false"} if web is not None else {}
    options: dict[str, Any] = {"replicas": replicas, "address": address, "env": env}
    if max_sessions:
        options["max_sessions"] = max_sessions
    with serving_until_stopped(lambda: RayProvider.from_folder(env_dir, **options)) as provider:
        for status in provider.replicas():
            console.print(
                f"[bold]Replica {status.index}[/]  {status.url}  (node {status.node_ip})",
                markup=True,
            )
        console.print(
            f"[bold]Name[/]  {provider.name}  (openenv ps --ray lists it; "
            f"openenv stop {provider.name})",
            markup=True,
        )
        console.print("Press Ctrl+C to stop.")
        _watch(provider)


def _watch(provider: Any) -> None:
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
