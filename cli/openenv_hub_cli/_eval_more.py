"""``openenv eval push DIR`` (publish a results folder) and ``openenv eval compare A B`` (two
runs side by side)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from openenv_hub_cli._utils import CommandError, console

__all__ = ["compare", "push", "push_folder"]

FolderArgument = Annotated[
    Path, typer.Argument(metavar="FOLDER", help="A results folder written by 'openenv eval'.")
]
OtherArgument = Annotated[
    Path, typer.Argument(metavar="FOLDER", help="The results folder to compare with.")
]


def push(
    results: FolderArgument,
    repo_id: Annotated[
        str, typer.Option("--repo-id", "-r", help="The dataset to push to (NS/NAME).")
    ],
    partial: Annotated[
        bool, typer.Option("--partial", help="Push even an incomplete run, or one with errors.")
    ] = False,
    private: Annotated[
        bool | None, typer.Option("--private/--public", help="Visibility on push.")
    ] = None,
) -> None:
    """Publish a results folder as a Hub dataset (its summary recomputed from its rows first)."""
    from openenv_hub.eval import ResultsFolder, summarize

    folder = ResultsFolder(results)
    settings = folder.read_json(ResultsFolder.RUN)
    folder.lock()  # no run writes to it meanwhile
    try:
        rows = folder.rows()
        if not rows:
            raise CommandError(f"{results} holds no rollouts.")
        names = (
            json.loads((results / ResultsFolder.TASKS).read_text())
            if (results / ResultsFolder.TASKS).is_file()
            else {}
        )
        summary = summarize(rows, rollouts_per_task=settings["rollouts_per_task"], expected=names)
        previous = (
            folder.read_json(ResultsFolder.SUMMARY)
            if (results / ResultsFolder.SUMMARY).is_file()
            else {}
        )
        if "last_run" in previous:
            summary["last_run"] = previous["last_run"]
        folder.write_json(ResultsFolder.SUMMARY, summary)
        push_folder(folder, repo_id, partial=partial, private=private)
    finally:
        folder.unlock()


def push_folder(folder: Any, repo_id: str, *, partial: bool, private: bool | None) -> None:
    """Push ``folder`` (its summary written) and say where."""
    from openenv_hub.eval import push_results

    url = push_results(folder, repo_id, partial=partial, private=private)
    console.print(f"Pushed to {url}")


def compare(
    first: FolderArgument,
    second: OtherArgument,
    confidence: Annotated[
        float,
        typer.Option("--confidence", min=0.5, max=0.999, help="Level of the confidence intervals."),
    ] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Compare two runs: per-task differences, pass@k with intervals, a paired test.

    See docs/eval.md.
    """
    from openenv_hub.eval import ResultsFolder, compare_runs

    rows = []
    for folder in (first, second):
        found = ResultsFolder(folder).rows()
        if not found:
            raise CommandError(
                f"{folder} holds no rollouts.", hint="Pass folders written by 'openenv eval'."
            )
        rows.append(found)
    result = compare_runs(rows[0], rows[1], confidence=confidence)
    if not result.tasks:
        raise CommandError(f"{first} and {second} have no task in common.")
    if as_json:
        console.print_json(json.dumps(dataclasses.asdict(result)))
        return
    _print_comparison(result, first, second)


def _print_comparison(result: Any, first: Path, second: Path) -> None:
    console.print(f"A = {first}, B = {second}: {len(result.tasks)} tasks in common.")
    level = f"{result.confidence:.0%}"
    for k, sides in result.pass_at_k.items():
        shown = "  ".join(
            f"{side.upper()} {v:.3f} [{low:.3f}, {high:.3f}]"
            for side, (v, low, high) in sides.items()
        )
        console.print(f"pass@{k}: {shown}  ({level} intervals)", highlight=False)
    console.print(
        f"Mean pass rate difference B - A: {result.mean_difference:+.3f} over "
        f"{len(result.tasks)} tasks; paired sign-flip test p = {result.p_value:.3g}.",
        highlight=False,
    )
    differing = sorted(
        (d for d in result.tasks if d.difference), key=lambda d: (-abs(d.difference), d.task)
    )
    if differing:
        console.print("Tasks that differ (passes/rollouts in A -> B):")
    for d in differing:
        console.print(
            f"  {d.task}: {d.passed[0]}/{d.rollouts[0]} -> {d.passed[1]}/{d.rollouts[1]} "
            f"({d.difference:+.2f})",
            markup=False,
            highlight=False,
        )
    for side, only in (("A", result.only_a), ("B", result.only_b)):
        if only:
            console.print(f"Only in {side}: {', '.join(only)}", markup=False)
    if any(result.errors):
        console.print(
            f"Left out: {result.errors[0]} rollouts of A and {result.errors[1]} of B that failed "
            "on infrastructure errors."
        )
