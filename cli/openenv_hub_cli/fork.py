"""``openenv fork``: copy a Space into your namespace, to change it or to run your own."""

from __future__ import annotations

import typer

from openenv_hub_cli._hub import (
    EnvVarOption,
    HardwareOption,
    SecretOption,
    TokenOption,
    parse_secrets,
    parse_variables,
    progress,
)
from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    src: str = typer.Argument(..., metavar="SPACE", help="The Space to copy, NS/NAME."),
    repo_id: str | None = typer.Option(
        None, "--repo-id", "-r", help="NS/NAME of the copy.", show_default="YOU/NAME"
    ),
    private: bool | None = typer.Option(
        None, "--private/--public", help="Visibility of the copy.", show_default="as the source"
    ),
    hardware: str | None = HardwareOption,
    env_var: list[str] = EnvVarOption,
    secret: list[str] = SecretOption,
    token: str | None = TokenOption,
) -> None:
    """Duplicate a Space (files, history and variables; secrets only those you pass)."""
    from openenv_hub.hub import fork

    variables, secrets = parse_variables(env_var), parse_secrets(secret)
    with progress(f"Forking {src}"):
        result = fork(
            src,
            repo_id,
            private=private,
            hardware=hardware,
            variables=variables,
            secrets=secrets,
            token=token,
        )
    visibility = "private" if result.private else "public"
    console.print(
        f"[green]Forked[/] {result.source} -> {result.repo_id} ({visibility})", markup=True
    )
    console.print(f"Space: {result.url}")
    console.print(f"App:   {result.app_url}")
    console.print(
        f"Edit it: openenv pull {result.repo_id}, change it, then openenv push in that folder "
        f"(it goes to {result.repo_id})"
    )
