"""``openenv stop``: remove containers, Swarm services and Ray replicas this toolkit started."""

from __future__ import annotations

from typing import Annotated

import typer

from openenv_hub_cli._utils import CommandError, console

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
        typer.Option("--jobs", help="Cancel Hugging Face Jobs this toolkit ran (ids, or --all)."),
    ] = False,
    daytona: Annotated[
        bool,
        typer.Option(
            "--daytona", help="Delete Daytona sandboxes this toolkit created (ids, or --all)."
        ),
    ] = False,
) -> None:
    """Stop and remove servers started by openenv-hub (also those a crashed process left)."""
    from openenv_hub.runtimes.inventory import remove_managed

    if not names and not stop_all:
        raise CommandError(
            "Name what to stop, or pass --all.", hint="See what runs with 'openenv ps'."
        )
    if jobs:
        _cancel_jobs(names or [], stop_all)
        return
    if daytona:
        _delete_sandboxes(names or [], stop_all)
        return
    try:
        removed = remove_managed(names or (), everything=stop_all, ray_address=ray_address)
    except LookupError as exc:
        raise CommandError(
            f"Nothing started by openenv-hub is named {exc}; nothing was stopped.",
            hint="See what runs with 'openenv ps'.",
        ) from None
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
