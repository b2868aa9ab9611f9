"""``openenv tasks``: list the tasks of an environment, or of a taskset."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from openenv_hub_cli._utils import console

__all__ = ["command"]

#: Tasks listed when --limit is not given.
DEFAULT_LIMIT = 20


def command(
    env: Annotated[str, typer.Argument(help="The environment: a server URL or a folder.")],
    split: Annotated[str | None, typer.Option("--split", help="List this split only.")] = None,
    tasks: Annotated[
        str | None,
        typer.Option("--tasks", help="Taskset: a folder of .jsonl, or hf://datasets/NS/NAME."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", min=1, help="List the first N tasks.")
    ] = DEFAULT_LIMIT,
) -> None:
    """List the tasks an evaluation of ENV would play: key, split, reset arguments, prompt.

    Without --tasks, they are the taskset of the folder's openenv.yaml, else the ones the
    environment lists through its task routes.
    """
    from openenv_hub.eval import find_tasks

    found, total = find_tasks(env, tasks, split, limit=limit)
    table = Table("split", "key", "reset", "prompt")
    for task in found:
        prompt = task.prompt if len(task.prompt) <= 60 else task.prompt[:57] + "..."
        table.add_row(task.split, task.key, str(task.reset), prompt.replace("\n", " "))
    console.print(table)
    if len(found) < total:
        console.print(f"The first {len(found)} of {total} tasks (--limit N lists more).")
    else:
        console.print(f"{total} tasks")
