"""``openenv tasks``: list the tasks of an environment, or of a taskset."""

from __future__ import annotations

import typer
from rich.table import Table

from openenv_hub_cli._utils import console
from openenv_hub_cli.eval import env_url

__all__ = ["command"]


def command(
    env: str = typer.Argument(..., help="The environment: a server URL or a folder."),
    split: str | None = typer.Option(None, "--split", help="List this split only."),
    tasks: str | None = typer.Option(
        None, "--tasks", help="Taskset: a folder of .jsonl, or hf://datasets/NS/NAME."
    ),
) -> None:
    """List the tasks an evaluation of ENV would play: key, split, reset arguments, prompt."""
    from openenv_hub.eval import environment_metadata, load_tasks, server_tasks

    if tasks:
        found = load_tasks(tasks, split=split)
    else:
        with env_url(env) as url:
            name = str(environment_metadata(url).get("name") or "env")
            found = server_tasks(url, name, split=split)
    table = Table("split", "key", "reset", "prompt")
    for task in found:
        prompt = task.prompt if len(task.prompt) <= 60 else task.prompt[:57] + "..."
        table.add_row(task.split, task.key, str(task.reset), prompt.replace("\n", " "))
    console.print(table)
    console.print(f"{len(found)} tasks")
