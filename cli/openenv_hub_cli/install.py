"""``openenv install``: pip-install an environment's package from its Space."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from openenv_hub_cli._hub import TokenOption
from openenv_hub_cli._utils import console, err_console

__all__ = ["command"]

#: The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED_EXIT_CODE = 130


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
    except KeyboardInterrupt:
        _interrupted(repo_id, spec)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
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


def _interrupted(repo_id: str, spec: str) -> None:
    """Say that pip was stopped, and what that leaves: pip installs one package after another,
    so what it finished stays installed, and the rest (and a package it was replacing) may be
    missing."""
    err_console.print(
        f"Interrupted: the install of {escape(repo_id)} was stopped. Packages pip had finished "
        f"installing stay installed; {escape(repo_id)}'s own package, the rest of its "
        "dependencies and a package pip was replacing may be missing.\n"
        f"To finish, run the same command again: openenv install {escape(spec)}",
        markup=True,
    )


def _usage(repo_id: str, commit: str | None) -> None:
    from openenv_hub.hub import find_installed

    found = find_installed(repo_id, commit)
    if found is None:
        return
    module, _, name = found.value.partition(":")
    console.print(f"Use it: from {module} import {name}")
