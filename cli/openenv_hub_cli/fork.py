"""``openenv fork``: copy a Space into your namespace, to change it or to run your own."""

from __future__ import annotations

from typing import Annotated

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
    src: Annotated[str, typer.Argument(metavar="SPACE", help="The Space to copy, NS/NAME.")],
    repo_id: Annotated[
        str | None,
        typer.Option("--repo-id", "-r", help="NS/NAME of the copy.", show_default="YOU/NAME"),
    ] = None,
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public", help="Visibility of the copy.", show_default="as the source"
        ),
    ] = None,
    hardware: HardwareOption = None,
    env_var: EnvVarOption = None,
    secret: SecretOption = None,
    token: TokenOption = None,
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
