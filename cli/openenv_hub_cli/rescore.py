"""``openenv rescore``: recompute the rewards of saved rollouts with the environment's current
rubric, by replaying their actions, then their ``passed``, pass@k and the summary, and report
what changed (written to ``rescore.json`` and ``rescore-summary.json``; the rows stay as they
were played)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub_cli._utils import CommandError, console

__all__ = ["command"]

ResultsArgument = Annotated[
    Path, typer.Argument(metavar="FOLDER", help="A results folder written by 'openenv eval'.")
]


def command(
    results: ResultsArgument,
    env: Annotated[
        str | None,
        typer.Option("--env", help="The environment: a URL or a folder (default: the run's)."),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", "-c", min=1)] = 4,
    pass_threshold: Annotated[
        float | None,
        typer.Option(
            "--pass-threshold",
            help="A rollout passes when its return reaches this (default: the run's).",
        ),
    ] = None,
) -> None:
    """Replay saved rollouts with no model; recompute rewards, passes and pass@k.

    See docs/eval.md.
    """
    from openenv_hub.eval import ResultsFolder, env_url, rescore_rows, rescored_rows, summarize

    folder = ResultsFolder(results)
    settings = folder.read_json(ResultsFolder.RUN)
    rows = folder.rows()
    if not rows:
        raise CommandError(f"{results} holds no rollouts.")
    with env_url(env or settings["env"]) as url:
        rescored = asyncio.run(rescore_rows(url, rows, concurrency=concurrency))
    threshold = settings.get("pass_threshold", 1.0) if pass_threshold is None else pass_threshold
    again = rescored_rows(rows, rescored, pass_threshold=threshold)
    per_task = settings["rollouts_per_task"]
    before = summarize(rows, rollouts_per_task=per_task)
    after = summarize(again, rollouts_per_task=per_task)
    report = [
        {**dataclasses.asdict(r), "passed": new.get("passed"), "was_passed": old.get("passed")}
        for r, old, new in zip(rescored, rows, again, strict=True)
    ]
    folder.write_json("rescore.json", report)
    folder.write_json("rescore-summary.json", {**after, "pass_threshold": threshold})
    _report(rescored, url, before, after)
    lost = sum(1 for r, row in zip(rescored, rows, strict=True) if r.problem and not _errored(row))
    if lost:
        raise CommandError(
            f"{lost} of {len(rows)} rollouts could not be replayed: the pass@k above leaves them "
            "out, so it is not the whole run's.",
            hint="Is --env the environment the run played, and is it up? Rescore again.",
        )


def _errored(row: dict[str, Any]) -> bool:
    return bool(row.get("error")) or row.get("finish") == "error"


def _report(rescored: list[Any], url: str, before: dict[str, Any], after: dict[str, Any]) -> None:
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
            f"{sum(r.rescored):.4g} ({r.return_change:+.4g})",
            markup=False,
        )
    worded = [r for r in rescored if r.text_changed and not r.problem]
    if worded:
        fields = sorted({name for r in worded for name in r.text_changed})
        console.print(
            f"  {len(worded)} rollouts read differently ({', '.join(fields)}) with the rubric's "
            "inputs the same: rescored.",
            markup=False,
        )
    for r in skipped:
        console.print(f"  {r.split}/{r.task_key} #{r.sample}: {r.problem}", markup=False)
    if changed:
        total = sum(r.return_change for r in changed) / len(rescored)
        console.print(f"Mean return changed by {total:+.4g}.")
    for k, value in after["pass_at_k"].items():
        was = before["pass_at_k"].get(k)
        shown = f"{was:.3f} -> " if was is not None else ""
        console.print(f"pass@{k} {shown}{value:.3f}", highlight=False)
