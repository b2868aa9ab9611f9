"""``openenv versions``: the tagged versions of an environment on the Hub."""

from __future__ import annotations

from rich.table import Table

from openenv_hub_cli._hub import SpaceArg, TokenOption
from openenv_hub_cli._utils import console

__all__ = ["command"]


def command(
    repo_id: SpaceArg,
    token: TokenOption = None,
) -> None:
    """List the versions (git tags) of a Space, oldest first, with the line that installs each."""
    from openenv_hub.hub import versions

    found = versions(repo_id, token=token)
    if not found:
        console.print(f"{repo_id} has no versions yet.")
        console.print("Tag one when you publish: openenv push --version 0.1.0")
        return
    table = Table(title=f"Versions of {repo_id}", title_justify="left")
    for column in ("version", "commit", "install"):
        table.add_column(column, overflow="fold")
    for version in found:
        table.add_row(version.name, version.commit[:7], version.pip_install)
    console.print(table)
