"""The ``openenv`` command: the root Typer app. Each command lives in a module of its own.

To add a command, write ``cli/openenv_hub_cli/NAME.py`` with a function, then register it below
with one line: ``app.command("NAME")(NAME.command)`` (or ``app.add_typer(NAME.app, name=...)``
for a group of subcommands).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from openenv_hub_cli import (
    build,
    cache,
    deploy,
    export,
    fork,
    import_env,
    init,
    install,
    ps,
    pull,
    push,
    record,
    rescore,
    serve,
    stop,
    tasks,
    validate,
    versions,
    whoami,
)
from openenv_hub_cli import eval as evaluate
from openenv_hub_cli._help import HELP_OPTIONS, decorate, wrap_long_words
from openenv_hub_cli._help import command as help_command
from openenv_hub_cli._utils import run_app
from openenv_hub_cli._version import version_text

__all__ = ["app", "main"]

app = typer.Typer(
    name="openenv",
    help="Make, serve, validate, build and publish OpenEnv environments.",
    context_settings=HELP_OPTIONS,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(version_text(program_name()))
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Show the version, and which package the 'openenv' command on PATH belongs to.",
        ),
    ] = False,
) -> None:
    """Make, serve, validate, build and publish OpenEnv environments."""


app.command("init")(init.command)
app.command("serve")(serve.command)
app.command("validate")(validate.command)
app.command("build")(build.command)
app.command("push")(push.command)
app.command("fork")(fork.command)
app.command("install")(install.command)
app.command("pull")(pull.command)
app.command("versions")(versions.command)
app.command("whoami")(whoami.command)
app.command("record")(record.command)
app.command("ps")(ps.command)
app.command("stop")(stop.command)
app.add_typer(deploy.app, name="deploy")
app.add_typer(cache.app, name="cache")
app.add_typer(import_env.app, name="import")
app.add_typer(export.app, name="export")
app.add_typer(evaluate.app, name="eval")
app.command("tasks")(tasks.command)
app.command("rescore")(rescore.command)
app.command("help")(help_command)


#: Options whose value may be left out, and what they mean alone: ``--ray`` is the cluster at
#: ``$RAY_ADDRESS``. (Click cannot make a value optional through Typer, so it is filled in here.)
OPTIONAL_VALUES = {"--ray": "auto"}


def with_optional_values(args: list[str]) -> list[str]:
    """``args`` with the value of each option of :data:`OPTIONAL_VALUES` that was given
    without one (last, or followed by another option) filled in."""
    filled: list[str] = []
    for index, arg in enumerate(args):
        filled.append(arg)
        following = args[index + 1] if index + 1 < len(args) else "-"
        if arg in OPTIONAL_VALUES and following.startswith("-"):
            filled.append(OPTIONAL_VALUES[arg])
    return filled


def program_name() -> str:
    """``openenv-hub`` when started by that name, else ``openenv``."""
    started = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "openenv-hub" if started.startswith("openenv-hub") else "openenv"


def main(args: list[str] | None = None) -> None:
    """Entry point of the ``openenv`` and ``openenv-hub`` scripts (the same command)."""
    arguments = with_optional_values(sys.argv[1:] if args is None else args)
    if not arguments or {"-h", "--help", "help"} & set(arguments):  # help is shown
        wrap_long_words()
    run_app(app, arguments, prog_name=program_name(), decorate=decorate)


if __name__ == "__main__":
    main()
