"""``openenv install``: pip-install an environment's package from its Space."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from openenv_hub_cli._hub import TokenOption
from openenv_hub_cli._utils import console, err_console

__all__ = ["command"]


def command(
    spec: Annotated[
        str,
        typer.Argument(
            metavar="SPACE",
            help="The Space, NS/NAME, or NS/NAME@VERSION (a tag, branch or commit).",
        ),
    ],
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Trust the Space's code; do not ask. ($OPENENV_TRUST_REMOTE_CODE=1)"
        ),
    ] = False,
    upgrade: Annotated[
        bool, typer.Option("--upgrade", "-U", help="Reinstall if installed.")
    ] = False,
    token: TokenOption = None,
) -> None:
    """Install an environment (client, models and server) into this Python with pip.

    This runs code from the Space, so it asks first (at a terminal) unless --yes is given.
    """
    from openenv_hub.errors import RemoteCodeNotTrustedError
    from openenv_hub.hub import install, parse_spec

    repo_id, revision = parse_spec(spec)
    declined = False

    def confirm(question: str) -> bool:
        nonlocal declined
        declined = not typer.confirm(question, default=False, err=True)
        return not declined

    try:
        result = install(
            repo_id,
            revision,
            upgrade=upgrade,
            yes=yes,
            token=token,
            confirm=confirm,
            on_output=lambda line: err_console.print(escape(line), style="dim"),
        )
    except RemoteCodeNotTrustedError:
        if not declined:
            raise
        err_console.print(f"Not installed: you answered no. Nothing was changed for {repo_id}.")
        raise typer.Exit(1) from None
    at = f"@{revision}" if revision else ""
    console.print(
        f"[green]Installed[/] {result.repo_id}{at} (commit {(result.commit or '?')[:7]}) "
        f"into {sys.executable}",
        markup=True,
    )
    for package, asked in result.kept:
        console.print(
            f"[yellow]Kept[/] {escape(package.describe())}; the Space asks for "
            f"{escape(asked)}. (To use the Space's, uninstall yours first.)",
            markup=True,
        )
    _usage(result.repo_id, result.commit)


def _usage(repo_id: str, commit: str | None) -> None:
    from openenv_hub.hub import find_installed

    found = find_installed(repo_id, commit)
    if found is None:
        return
    module, _, name = found.value.partition(":")
    console.print(f"Use it: from {module} import {name}")
