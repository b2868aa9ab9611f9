"""``openenv ps``: the containers, Swarm services and Ray replicas this toolkit started, from any
process."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            envvar="RAY_ADDRESS",
            metavar="[ADDRESS]",
            help="Also list the replicas on the Ray cluster at ADDRESS (alone: $RAY_ADDRESS).",
        ),
    ] = None,
    jobs: Annotated[
        bool,
        typer.Option(
            "--jobs", help="List the Hugging Face Jobs this toolkit ran in your namespace."
        ),
    ] = False,
    daytona: Annotated[
        bool,
        typer.Option(
            "--daytona",
            help="List the Daytona sandboxes this toolkit created ($DAYTONA_API_KEY, $DAYTONA_API_URL).",
        ),
    ] = False,
) -> None:
    """List running (and left-behind) servers started by from_docker_image, serve, LocalHub..."""
    from openenv_hub.runtimes.inventory import list_managed

    if jobs:
        _list_jobs(as_json)
        return
    if daytona:
        _list_sandboxes(as_json)
        return

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


def _list_jobs(as_json: bool) -> None:
    from openenv_hub.runtimes.jobs_inventory import list_jobs

    found = list_jobs()
    if as_json:
        console.print_json(json.dumps([job.to_json() for job in found]))
        return
    if not found:
        console.print("No Job of openenv-hub is in your namespace.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("JOB", "STAGE", "AGE", "FLAVOR", "COST SO FAR", "URL", "SOURCE"):
        table.add_column(column, overflow="fold")
    for job in found:
        cost = "?" if job.cost_so_far_usd is None else f"${job.cost_so_far_usd:.4f}"
        stage = job.stage + (" (detached)" if job.detached else "")
        table.add_row(job.id, stage, _age(job.age_s), job.flavor, cost, job.url, escape(job.source))
    console.print(table)


def _list_sandboxes(as_json: bool) -> None:
    from openenv_hub.runtimes.daytona_inventory import list_sandboxes

    found = list_sandboxes()
    if as_json:
        console.print_json(json.dumps([sandbox.to_json() for sandbox in found]))
        return
    if not found:
        console.print("No sandbox of openenv-hub is on this Daytona.")
        return
    table = Table(box=None, pad_edge=False)
    for column in ("SANDBOX", "STATE", "AGE", "SIZE", "AUTO-STOP", "SOURCE", "OWNER"):
        table.add_column(column, overflow="fold")
    for sandbox in found:
        size = f"{sandbox.cpu} CPU, {sandbox.memory_gib} GiB, {sandbox.disk_gib} GiB disk"
        stop = f"{sandbox.auto_stop_minutes:g} min" if sandbox.auto_stop_minutes else "never"
        owner = f"pid {sandbox.owner_pid or '?'}" + ("" if sandbox.owner_alive else " (gone)")
        table.add_row(
            sandbox.id,
            sandbox.state,
            _age(sandbox.age_s),
            size,
            stop,
            escape(sandbox.source),
            owner,
        )
    console.print(table)


def _age(seconds: float) -> str:
    """``75`` -> ``1m15s``; ``7300`` -> ``2h01m``."""
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
