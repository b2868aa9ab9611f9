"""``openenv rescore``: recompute the rewards of saved rollouts with the environment's current
rubric, by replaying their actions, and report what changed."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import typer

from openenv_hub_cli._utils import CommandError, console
from openenv_hub_cli.eval import env_url

__all__ = ["command"]

ResultsArgument = typer.Argument(
    ..., metavar="FOLDER", help="A results folder written by 'openenv eval'."
)


def command(
    results: Path = ResultsArgument,
    env: str | None = typer.Option(
        None, "--env", help="The environment: a URL or a folder (default: the run's)."
    ),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1),
) -> None:
    """Replay saved rollouts with no model and compare their rewards (see docs/eval.md)."""
    from openenv_hub.eval import ResultsFolder, rescore_rows

    folder = ResultsFolder(results)
    settings = folder.read_json(ResultsFolder.RUN)
    rows = folder.rows()
    if not rows:
        raise CommandError(f"{results} holds no rollouts.")
    with env_url(env or settings["env"]) as url:
        rescored = asyncio.run(rescore_rows(url, rows, concurrency=concurrency))
    folder.write_json("rescore.json", [dataclasses.asdict(r) for r in rescored])
    changed = [r for r in rescored if r.changed]
    skipped = [r for r in rescored if r.problem]
    same = len(rescored) - len(changed) - len(skipped)
    console.print(
        f"Rescored {len(rescored)} rollouts at {url}: {same} unchanged, {len(changed)} changed, "
        f"{len(skipped)} not rescored."
    )
    for r in changed:
        console.print(
            f"  {r.split}/{r.task_key} #{r.sample}: return {sum(r.recorded):.4g} -> "
            f"{sum(r.rescored):.4g} ({r.return_change:+.4g})"
        )
    for r in skipped:
        console.print(f"  {r.split}/{r.task_key} #{r.sample}: {r.problem}")
    if changed:
        total = sum(r.return_change for r in changed) / len(rescored)
        console.print(f"Mean return changed by {total:+.4g}.")
