"""``openenv ps``: the containers, Swarm services and Ray replicas this toolkit started, from any
process."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    ray_address: str | None = typer.Option(
        None,
        "--ray",
        envvar="RAY_ADDRESS",
        metavar="[ADDRESS]",
        help="Also list the replicas on the Ray cluster at ADDRESS (alone: $RAY_ADDRESS).",
    ),
) -> None:
    """List running (and left-behind) servers started by from_docker_image, serve, LocalHub..."""
    from openenv_hub.runtimes.inventory import list_managed

    items = list_managed(ray_address=ray_address)
    if as_json:
        console.print_json(json.dumps([item.to_json() for item in items]))
        return
    if not items:
        where = "this Docker engine" + (" or the Ray cluster" if ray_address else "")
        console.print(f"Nothing started by openenv-hub is on {where}.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("NAME", "RUNTIME", "STATUS", "URL", "SOURCE", "OWNER"):
        table.add_column(column, overflow="fold")
    for item in items:
        owner = f"pid {item.owner_pid}" if item.owner_pid else "?"
        owner += "" if item.owner_alive else " (gone)"
        table.add_row(
            escape(item.name), item.runtime, item.status, item.url, escape(item.source), owner
        )
    console.print(table)
