"""``openenv validate``: check an environment folder, or a running server by its URL."""

from __future__ import annotations

import contextlib
from enum import Enum
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from openenv_hub.errors import ConnectError
from openenv_hub.network import wait_for_health
from openenv_hub.validation import CheckResult, passed, report_json, validate_path, validate_url
from openenv_hub_cli._utils import CommandError, console, resolve_env_dir

__all__ = ["Level", "command"]


class Level(str, Enum):
    static = "static"
    import_ = "import"
    runtime = "runtime"
    docker = "docker"


def command(
    target: str = typer.Argument(
        ".",
        metavar="ENV",
        help="An environment folder, or the URL of a running server.",
        show_default="current folder",
    ),
    json_output: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    level: Level = typer.Option(  # noqa: B008 - typer reads defaults from here
        Level.runtime, "--level", "-l", help="How far to go (each level includes the ones before)."
    ),
    timeout_s: float = typer.Option(
        10.0,
        "--timeout",
        min=0.1,
        help="Seconds for each check in total, however slowly the server answers (URL mode); "
        "the whole validation gets six times as long.",
    ),
    wait_s: float = typer.Option(
        0.0, "--wait", min=0.0, help="Seconds to wait for the URL to answer."
    ),
    base_image: str | None = typer.Option(
        None, "--base-image", envvar="OPENENV_BASE_IMAGE", help="BASE_IMAGE for --level docker."
    ),
    build_arg: list[str] = typer.Option([], "--build-arg", help="KEY=VALUE for --level docker."),  # noqa: B008 - typer reads defaults from here
    security_opt: list[str] = typer.Option(  # noqa: B008 - typer reads defaults from here
        [], "--security-opt", help="docker run --security-opt value for --level docker."
    ),
) -> None:
    """Check that an environment is complete and serves OpenEnv's protocol. Exit 1 on failure."""
    if target.startswith(("http://", "https://")):
        label, chosen = target, "url"
        if wait_s:
            _wait(target, wait_s)
        results = validate_url(target, timeout_s=timeout_s)
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
        )
    if json_output:
        typer.echo(report_json(label, chosen, results))
    else:
        _print_table(label, results)
    if not passed(results):
        raise typer.Exit(1)


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
            "[dim]skip[/]" if result.skipped else "[green]pass[/]" if result.ok else "[red]FAIL[/]"
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
    if failed:
        console.print(f"[red]Failed:[/] {', '.join(failed)}", markup=True)
    else:
        console.print(f"[green]All {len(results)} checks passed.[/]", markup=True)
