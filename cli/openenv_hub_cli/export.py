"""``openenv export harbor ENV -o DIR``: an environment's tasks as Harbor task folders (see
docs/importing.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from openenv_hub_cli._utils import EnvPathArg, console, resolve_env_dir

__all__ = ["app"]

OutputOption = Annotated[Path, typer.Option("--output", "-o", help="The folder of task folders.")]

app = typer.Typer(help="Write an environment's tasks in another format.", no_args_is_help=True)


@app.command("harbor")
def harbor(
    *,
    path: EnvPathArg = Path("."),
    output: OutputOption,
    split: Annotated[str | None, typer.Option("--split", help="Export this split only.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Export the first N tasks.")
    ] = None,
) -> None:
    """Write the environment's tasks as Harbor task folders: an environment imported from
    Harbor gets its tasks back unchanged; another one's taskset becomes one task a task, each
    running the environment in its container, its oracle (the manifest's) as the solution."""
    from openenv_hub.importers import export_harbor

    made = export_harbor(resolve_env_dir(path), output, split=split, limit=limit)
    how = "unchanged (a Harbor import)" if made.round_trip else "from the environment's taskset"
    console.print(
        f"[green]Exported[/] {len(made.tasks)} Harbor tasks to {made.path}, {how}"
        + ("" if made.oracle else "; no oracle"),
        markup=True,
    )
    for note in made.notes:
        console.print(f"Note: {note}", markup=False)
    console.print(f"Next:\n  harbor run --path {made.path} --agent oracle", markup=False)
