"""``openenv validate``: check an environment folder, or a running server by its URL."""

from __future__ import annotations

import contextlib
import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub.checks.scorecard import COULD_NOT_CHECK
from openenv_hub.errors import ConnectError
from openenv_hub.transport.local_ports import wait_for_health
from openenv_hub.validation import CheckResult, passed, report_json, validate_path, validate_url
from openenv_hub_cli._utils import CommandError, console, resolve_env_dir

if TYPE_CHECKING:
    from openenv_hub.checks.scorecard import Scorecard

__all__ = ["INCOMPLETE_EXIT_CODE", "Level", "command"]

#: The exit code when nothing failed but a quality check could not run.
INCOMPLETE_EXIT_CODE = 3


class Level(str, Enum):
    static = "static"
    import_ = "import"
    runtime = "runtime"
    docker = "docker"
    quality = "quality"


def command(
    target: Annotated[
        str,
        typer.Argument(
            metavar="ENV",
            help="An environment folder, or the URL of a running server.",
            show_default="current folder",
        ),
    ] = ".",
    json_output: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    level: Annotated[
        Level,
        typer.Option(
            "--level",
            "-l",
            help="How far to go: each level includes the ones before; quality adds a scorecard "
            "(docs/quality.md) to runtime, without docker. A URL is checked at runtime, or quality.",
        ),
    ] = Level.runtime,
    save: Annotated[
        bool,
        typer.Option(
            "--save",
            help="With --level quality on a folder: write the scorecard to FOLDER/quality.json, "
            "which openenv push shows on the Space card.",
        ),
    ] = False,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="With a URL and --level quality: the environment folder whose openenv.yaml holds "
            "the quality settings (its oracle included).",
        ),
    ] = None,
    timeout_s: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds for each check in total, however slowly the server answers (URL mode); "
            "the whole validation gets six times as long.",
        ),
    ] = 10.0,
    wait_s: Annotated[
        float, typer.Option("--wait", min=0.0, help="Seconds to wait for the URL to answer.")
    ] = 0.0,
    base_image: Annotated[
        str | None,
        typer.Option(
            "--base-image", envvar="OPENENV_BASE_IMAGE", help="BASE_IMAGE for --level docker."
        ),
    ] = None,
    build_arg: Annotated[
        list[str] | None, typer.Option("--build-arg", help="KEY=VALUE for --level docker.")
    ] = None,
    security_opt: Annotated[
        list[str] | None,
        typer.Option("--security-opt", help="docker run --security-opt value for --level docker."),
    ] = None,
) -> None:
    """Check that an environment is complete and serves OpenEnv's protocol. Exit 1 on failure
    (3 when nothing failed but a quality check could not run)."""
    if security_opt is None:
        security_opt = []
    if build_arg is None:
        build_arg = []
    cards: list[Scorecard] = []
    if target.startswith(("http://", "https://")):
        if save:
            raise CommandError("--save writes into an environment folder; a URL has none.")
        label, chosen = target, "quality" if level is Level.quality else "url"
        if wait_s:
            _wait(target, wait_s)
        results = validate_url(
            target,
            timeout_s=timeout_s,
            level=level.value,
            manifest_dir=_manifest_dir(manifest) if manifest else None,
            on_scorecard=cards.append,
        )
    else:
        path = (
            resolve_env_dir(Path(target))
            if Path(target, "openenv.yaml").exists()
            else _folder(target)
        )
        label, chosen = str(path), level.value
        results = validate_path(
            path,
            level=level.value,
            base_image=base_image,
            build_args=build_arg,
            security_opts=security_opt,
            on_scorecard=cards.append,
        )
        if save and cards:
            _save(path, cards[0])
    card = cards[0] if cards else None
    if json_output:
        report = json.loads(report_json(label, chosen, results))
        if card is not None:
            report["quality"] = card.to_json()
        typer.echo(json.dumps(report, indent=2))
    else:
        _print_table(label, results)
        if card is not None:
            _print_evidence(card)
    if not passed(results):
        raise typer.Exit(1)
    if card is not None and card.incomplete:
        raise typer.Exit(INCOMPLETE_EXIT_CODE)


def _manifest_dir(path: Path) -> Path:
    folder = path.parent if path.name == "openenv.yaml" else path
    if not (folder / "openenv.yaml").is_file():
        raise CommandError(f"No openenv.yaml in {folder} (--manifest names an environment folder).")
    return folder.resolve()


def _save(path: Path, card: Scorecard) -> None:
    from openenv_hub.checks.scorecard import SCORECARD_FILE

    written = path / SCORECARD_FILE
    written.write_text(
        json.dumps(card.to_json(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    console.print(f"Scorecard written to {escape(str(written))}", markup=True)


#: Evidence lines printed per check; --json has them all.
EVIDENCE_LINES = 8


def _print_evidence(card: Scorecard) -> None:
    """Each quality check's evidence below the table (the first lines of it)."""
    console.print(
        f"[bold]Quality scorecard[/] ({card.duration_s:g} s): {escape(card.badge())}", markup=True
    )
    for check in card.checks:
        lines = list(check.evidence)
        if check.hint and check.status != "pass":
            lines.insert(0, f"hint: {check.hint}")
        if not lines:
            continue
        console.print(f"[bold]{escape(check.name)}[/] ({check.status}):", markup=True)
        for line in lines[:EVIDENCE_LINES]:
            console.print(f"  {line}", markup=False, highlight=False)
        if len(lines) > EVIDENCE_LINES:
            console.print(f"  ({len(lines) - EVIDENCE_LINES} more lines in --json)", markup=False)


def _wait(url: str, wait_s: float) -> None:
    with contextlib.suppress(ConnectError):  # the checks report it
        wait_for_health(url.rstrip("/"), timeout_s=wait_s)


def _folder(target: str) -> Path:
    path = Path(target)
    if not path.is_dir():
        raise CommandError(f"Path does not exist or is not a folder: {target}")
    return path.resolve()


#: Lines of a message shown in the table; the rest (a log, a traceback) is printed below it.
TABLE_LINES = 3


def _print_table(label: str, results: list[CheckResult]) -> None:
    """A row per check; a failure's hint comes first, and its long output after the table."""
    table = Table(title=f"openenv validate {label}", title_justify="left")
    for column in ("check", "level", "result", "details"):
        table.add_column(column, overflow="fold")
    below = []
    for result in results:
        mark = (
            "[yellow]could not check[/]"
            if result.skipped and result.message.startswith(COULD_NOT_CHECK)
            else "[dim]skip[/]"
            if result.skipped
            else "[green]pass[/]"
            if result.ok
            else "[red]FAIL[/]"
        )
        lines = result.message.splitlines() or [""]
        details = escape("\n".join(lines[:TABLE_LINES]))
        if len(lines) > TABLE_LINES:
            details += f"\n[dim]({len(lines) - TABLE_LINES} more lines below the table)[/]"
            below.append((result.name, lines[TABLE_LINES:]))
        if result.hint and not result.ok:
            details = f"[yellow]hint:[/] {escape(result.hint)}\n{details}"
        table.add_row(result.name, result.level, mark, details)
    console.print(table)
    for name, rest in below:
        console.print(f"[bold]{escape(name)}[/], continued:", markup=True)
        for line in rest:
            console.print(f"  {line}", markup=False, highlight=False)
    failed = [r.name for r in results if not r.ok]
    unchecked = [r.name for r in results if r.message.startswith(COULD_NOT_CHECK)]
    if failed:
        console.print(f"[red]Failed:[/] {', '.join(failed)}", markup=True)
    if unchecked:
        console.print(f"[yellow]Could not check:[/] {', '.join(unchecked)}", markup=True)
    if not failed and not unchecked:
        console.print(f"[green]All {len(results)} checks passed.[/]", markup=True)
