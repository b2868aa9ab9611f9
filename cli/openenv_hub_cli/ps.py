"""``openenv ps``: the containers and Swarm services this toolkit started, from any process."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List running (and left-behind) servers started by from_docker_image, serve, LocalHub..."""
    from openenv_hub.providers.inventory import list_managed

    items = list_managed()
    if as_json:
        console.print_json(json.dumps([item.to_json() for item in items]))
        return
    if not items:
        console.print("Nothing started by openenv-hub is on this Docker engine.")
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
