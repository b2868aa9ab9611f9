"""``openenv stop``: remove containers, Swarm services and Ray replicas this toolkit started."""

from __future__ import annotations

import typer

from openenv_hub_cli._utils import CommandError, console

__all__ = ["command"]


def command(
    names: list[str] = typer.Argument(  # noqa: B008 - typer reads defaults from here
        None,
        metavar="NAME...",
        help="Names or id prefixes, as 'openenv ps' shows them.",
        show_default=False,
    ),
    stop_all: bool = typer.Option(False, "--all", help="Remove everything 'openenv ps' lists."),
    ray_address: str | None = typer.Option(
        None,
        "--ray",
        envvar="RAY_ADDRESS",
        metavar="[ADDRESS]",
        help="Also stop replicas on the Ray cluster at ADDRESS (alone: $RAY_ADDRESS).",
    ),
) -> None:
    """Stop and remove servers started by openenv-hub (also those a crashed process left)."""
    from openenv_hub.runtimes.inventory import remove_managed

    if not names and not stop_all:
        raise CommandError(
            "Name what to stop, or pass --all.", hint="See what runs with 'openenv ps'."
        )
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
