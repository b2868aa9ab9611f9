"""``openenv ps``: what the runtimes of the registry started (server processes, containers,
Swarm services, Ray replicas; Jobs, Daytona sandboxes and Kubernetes Deployments when named),
from any process: each runtime's servers by its inventory
(:mod:`openenv_hub.runtimes.everywhere`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub_cli._utils import console, err_console

if TYPE_CHECKING:
    from openenv_hub.runtimes import Running

__all__ = ["command"]


def command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    runtimes: Annotated[
        list[str] | None,
        typer.Option(
            "--runtime",
            metavar="NAME",
            help="List only what the runtime NAME started (repeatable; e.g. jobs, daytona, "
            "kubernetes, which plain 'openenv ps' does not ask).",
            show_default="this machine's and a known Ray cluster's",
        ),
    ] = None,
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
            "--jobs", help="List the Hugging Face Jobs this toolkit ran (--runtime jobs)."
        ),
    ] = False,
    daytona: Annotated[
        bool,
        typer.Option(
            "--daytona",
            help="List the Daytona sandboxes this toolkit created (--runtime daytona; "
            "$DAYTONA_API_KEY, $DAYTONA_API_URL).",
        ),
    ] = False,
) -> None:
    """List running (and left-behind) servers started by serve, from_docker_image, LocalHub..."""
    from openenv_hub.runtimes import get_runtime
    from openenv_hub.runtimes.everywhere import list_running

    named = [*(runtimes or []), *(["jobs"] if jobs else []), *(["daytona"] if daytona else [])]
    for name in named:
        get_runtime(name)  # an unknown name: the error lists the runtimes
    if named == ["jobs"]:
        _list_jobs(as_json)
        return
    if named == ["daytona"]:
        _list_sandboxes(as_json)
        return
    listing = list_running(named or None, also=["ray"] if ray_address else [], address=ray_address)
    if as_json:
        console.print_json(json.dumps([item.to_json() for item in listing.items]))
    elif not listing.items:
        asked = ", ".join(listing.asked) or "nothing"
        console.print(f"Nothing started by openenv-hub runs (asked: {asked}).")
    else:
        _print_table(listing.items)
    for line in listing.unasked:  # one line each: what could not be listed, and why
        err_console.print(f"Not listed: {line}", markup=False, highlight=False)


def _print_table(items: list[Running]) -> None:
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
