"""``openenv --version``: this version, and which package the ``openenv`` command on PATH
belongs to (the ``openenv`` package installs a command of that name too; the one installed
last wins, while ``openenv-hub`` is always this one)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from openenv_hub import __version__

__all__ = ["COMMAND", "version_text"]

COMMAND = "openenv"
OWN_MODULE = "openenv_hub_cli.main"
DISTRIBUTION = "openenv-hub"


@dataclass(frozen=True)
class CommandOwner:
    """A distribution that installs the ``openenv`` command, and the module it runs."""

    distribution: str
    version: str
    module: str

    @property
    def label(self) -> str:
        return f"{self.distribution} {self.version}"


def command_owners() -> list[CommandOwner]:
    """Every installed distribution declaring an ``openenv`` console script."""
    owners: dict[str, CommandOwner] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] or "?"
        for entry in dist.entry_points:
            if entry.group == "console_scripts" and entry.name == COMMAND:
                owners[name.lower()] = CommandOwner(name, dist.version, entry.module)
    return sorted(owners.values(), key=lambda owner: owner.distribution.lower())


def _script_owner(script: Path, owners: list[CommandOwner]) -> CommandOwner | None:
    """The owner whose module the script imports (pip's scripts say ``from MODULE import``)."""
    try:
        text = script.read_text(encoding="utf-8", errors="replace")[:4000]
    except OSError:
        return None
    return next((owner for owner in owners if f"from {owner.module} import" in text), None)


def version_text(prog: str) -> str:
    """What ``--version`` prints when the program was started as ``prog``."""
    lines = [f"{DISTRIBUTION} {__version__}"]
    owners = command_owners()
    others = [owner for owner in owners if owner.module != OWN_MODULE]
    found = shutil.which(COMMAND)
    if found is None:
        lines.append(f"No '{COMMAND}' command is on PATH; '{DISTRIBUTION}' runs this one.")
        return "\n".join(lines)
    owner = _script_owner(Path(found), owners)
    whose = f"{owner.label}'s" if owner else "of an unknown package"
    lines.append(f"'{COMMAND}' on PATH: {found} ({whose}).")
    if others:
        names = ", ".join(other.label for other in others)
        lines.append(
            f"{names} also installs an '{COMMAND}' command: the package installed last owns it. "
            f"'{DISTRIBUTION}' always runs {DISTRIBUTION}."
        )
    elif prog != DISTRIBUTION:
        lines.append(f"'{DISTRIBUTION}' is the same command.")
    return "\n".join(lines)
