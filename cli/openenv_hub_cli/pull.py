"""``openenv pull``: an editable local copy of a Space's environment."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from openenv_hub_cli._hub import SpaceArg, TokenOption, progress
from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    repo_id: SpaceArg,
    dest: Annotated[
        Path | None,
        typer.Argument(
            metavar="FOLDER", help="Folder to create (must be new or empty).", show_default="./NAME"
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option("--revision", help="A version, branch or commit.", show_default="main"),
    ] = None,
    token: TokenOption = None,
) -> None:
    """Download a Space's files into a new folder, to run, change and push them.

    The folder remembers the Space, so 'openenv push' inside it goes back there.
    """
    from openenv_hub.hub import pull

    with progress(f"Downloading {repo_id}"):
        path = pull(repo_id, dest, revision=revision, token=token)
    console.print(f"[green]Pulled[/] {repo_id} into {path}", markup=True)
    console.print(
        f"Next:\n  cd {path}\n  pip install -e .\n  openenv serve\n"
        f"  openenv push   (goes back to {repo_id}; --repo-id to push elsewhere)"
    )
