"""``openenv whoami``: who the Hub token is, and where a push of a folder would go."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape

from openenv_hub.model.manifest import MANIFEST_FILE
from openenv_hub_cli._hub import TokenOption
from openenv_hub_cli._utils import EnvPathArg, console

__all__ = ["command"]


def command(path: EnvPathArg = Path("."), token: TokenOption = None) -> None:
    """Show the account of the Hub token (never the token), and, in an environment folder, the
    Space a push would go to and why."""
    from openenv_hub.hub import account, push_target

    who = account(token=token)
    role = f", {who.role} token" if who.role else ""
    console.print(f"{escape(who.name)} on {who.endpoint} (from {who.token_source}{role})")
    if who.organisations:
        orgs = ", ".join(  # a role the Hub did not say is left out
            escape(f"{name} ({role})" if role else name)
            for name, role in sorted(who.organisations.items())
        )
        console.print(f"Organisations: {orgs}")
    if not (path / MANIFEST_FILE).is_file():
        console.print(f"{path.resolve()} is not an environment folder: no push target.")
        return
    target = push_target(path, token=token)
    console.print(
        f"A push of {escape(path.resolve().name)} goes to [bold]{target.repo_id}[/] "
        f"({escape(target.reason)})",
        markup=True,
    )
