"""``openenv stop``: stop and remove what the runtimes of the registry started (server
processes, containers, Swarm services, Ray replicas; Jobs, Daytona sandboxes and Kubernetes
Deployments when named), whichever process started it."""

from __future__ import annotations

from typing import Annotated

import typer

from openenv_hub_cli._utils import CommandError, console, err_console

__all__ = ["command"]


def command(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="NAME...",
            help="Names or id prefixes, as 'openenv ps' shows them.",
            show_default=False,
        ),
    ] = None,
    stop_all: Annotated[
        bool, typer.Option("--all", help="Remove everything 'openenv ps' lists.")
    ] = False,
    runtimes: Annotated[
        list[str] | None,
        typer.Option(
            "--runtime",
            metavar="NAME",
            help="Stop only what the runtime NAME started (repeatable), as 'openenv ps --runtime'.",
            show_default="what plain 'openenv ps' lists",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            envvar="RAY_ADDRESS",
            metavar="[ADDRESS]",
            help="Also stop replicas on the Ray cluster at ADDRESS (alone: $RAY_ADDRESS).",
        ),
    ] = None,
    jobs: Annotated[
        bool,
        typer.Option("--jobs", help="Cancel Hugging Face Jobs this toolkit ran (--runtime jobs)."),
    ] = False,
    daytona: Annotated[
        bool,
        typer.Option(
            "--daytona", help="Delete Daytona sandboxes this toolkit created (--runtime daytona)."
        ),
    ] = False,
) -> None:
    """Stop and remove servers started by openenv-hub (also those a crashed process left)."""
    from openenv_hub.runtimes import get_runtime
    from openenv_hub.runtimes.everywhere import NotListed, remove_running

    if not names and not stop_all:
        raise CommandError(
            "Name what to stop, or pass --all.", hint="See what runs with 'openenv ps'."
        )
    named = [*(runtimes or []), *(["jobs"] if jobs else []), *(["daytona"] if daytona else [])]
    for name in named:
        get_runtime(name)  # an unknown name: the error lists the runtimes
    if named == ["jobs"]:
        _cancel_jobs(names or [], stop_all)
        return
    if named == ["daytona"]:
        _delete_sandboxes(names or [], stop_all)
        return
    try:
        removed, listing = remove_running(
            names or (),
            everything=stop_all,
            runtimes=named or None,
            also=["ray"] if ray_address else [],
            address=ray_address,
        )
    except NotListed as exc:
        for line in exc.unasked:
            err_console.print(f"Not listed: {line}", markup=False, highlight=False)
        raise CommandError(
            f"Nothing started by openenv-hub is named {exc}; nothing was stopped.",
            hint="See what runs with 'openenv ps'.",
        ) from None
    for line in listing.unasked:
        err_console.print(f"Not listed: {line}", markup=False, highlight=False)
    for item in removed:
        console.print(f"Removed {item.kind} {item.name} ({item.runtime})")
    if not removed:
        console.print("Nothing to stop.")


def _cancel_jobs(ids: list[str], everything: bool) -> None:
    from openenv_hub.runtimes.jobs_inventory import cancel_jobs

    try:
        cancelled = cancel_jobs(ids, everything=everything)
    except LookupError as exc:
        raise CommandError(
            f"No Job of openenv-hub has the id {exc}; nothing was cancelled.",
            hint="See them with 'openenv ps --jobs'.",
        ) from None
    for job in cancelled:
        console.print(f"Cancelled Job {job.id} ({job.source})")
    if not cancelled:
        console.print("No Job to cancel: those named have ended.")


def _delete_sandboxes(ids: list[str], everything: bool) -> None:
    from openenv_hub.runtimes.daytona_inventory import delete_sandboxes

    try:
        deleted = delete_sandboxes(ids, everything=everything)
    except LookupError as exc:
        raise CommandError(
            f"No sandbox of openenv-hub has the id {exc}; nothing was deleted.",
            hint="See them with 'openenv ps --daytona'.",
        ) from None
    for sandbox in deleted:
        console.print(f"Deleted sandbox {sandbox.id} ({sandbox.source})")
    if not deleted:
        console.print("No sandbox to delete.")
