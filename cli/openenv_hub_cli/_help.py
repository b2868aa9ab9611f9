"""What every command's help shares: ``-h``, an Examples section, plain metavars, and
``openenv help [COMMAND]...``.

Typer's rich help would show ``<bool>`` beside each flag and ``<str>`` beside each value; here a
flag shows nothing and a value shows its name (``--port PORT``). The examples come from
:data:`~openenv_hub_cli._examples.EXAMPLES`, keyed by the command's path (``"cache prune"``).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from openenv_hub_cli._examples import EXAMPLES, Example

__all__ = ["HELP_OPTIONS", "command", "decorate", "epilog", "wrap_long_words"]

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}

#: Metavars that say more than the option's name would.
METAVARS = {
    "repo_id": "NS/NAME",
    "push_to_hub": "NS/NAME",
    "env_var": "KEY=VALUE",
    "build_arg": "KEY=VALUE",
    "secret": "KEY[=VALUE]",
    "exclude": "PATTERN",
    "include_secret": "PATTERN",
    "wait_timeout": "SECONDS",
    "timeout_s": "SECONDS",
    "wait_s": "SECONDS",
    "older_than": "DAYS",
}


def epilog(examples: list[Example]) -> str:
    """The Examples section (rich markup), one command and what it does per example."""
    rows = [
        f"[dim]# {escape(example.what)}[/]\n[bold cyan]{escape(example.line)}[/]"
        for example in examples
    ]
    return "[bold]Examples[/]\n\n" + "\n\n".join(rows)


def wrap_long_words() -> None:
    """Make the option tables of the help wrap what does not fit their columns (a URL, a long
    option name) onto the next line, instead of cutting it with an ellipsis ("http://127.0.0.1:8…"
    at 80 columns).

    Typer draws them with rich tables whose columns cut by default and offers no setting for
    it, so this gives its ``rich_utils`` a table whose columns fold, and help texts that fold.
    Where a Typer version lacks either name, its help stays as Typer draws it.
    """
    from rich.table import Table
    from rich.text import Text
    from typer import rich_utils

    if getattr(rich_utils, "_openenv_wraps", False):
        return

    class FoldingTable(Table):
        def add_row(self, *renderables: Any, **options: Any) -> None:
            while len(self.columns) < len(renderables):
                self.add_column(overflow="fold")
            super().add_row(*renderables, **options)

    help_of = getattr(rich_utils, "_get_parameter_help", None)

    def folding_help(**arguments: Any) -> Any:
        columns = help_of(**arguments)  # type: ignore[misc]
        for item in getattr(columns, "renderables", []):
            if isinstance(item, Text):
                item.overflow = "fold"
        return columns

    if hasattr(rich_utils, "Table"):
        rich_utils.Table = FoldingTable
    if help_of is not None:
        rich_utils._get_parameter_help = folding_help
    rich_utils._openenv_wraps = True  # type: ignore[attr-defined]


def decorate(command: Any, path: str = "") -> None:
    """Give ``command`` (a click command of typer's own copy of click, hence duck-typed) and
    its subcommands their examples and plain metavars."""
    examples = EXAMPLES.get(path)
    if examples:
        command.epilog = epilog(examples)
    for param in command.params:
        if param.param_type_name == "option" and param.metavar is None:
            _plain_metavar(param)
        elif param.param_type_name == "argument":  # its name says it: no <str> beside it
            param.display_type_rich = lambda ctx: None
    help_option = command.get_help_option

    def plain_help_option(ctx: Any) -> Any:
        option = help_option(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = plain_help_option
    for name, sub in getattr(command, "commands", {}).items():
        decorate(sub, f"{path} {name}".strip())


def _plain_metavar(option: Any) -> None:
    """Nothing for a flag; else a name for the value (``PORT``, ``NS/NAME``)."""
    name = option.name or "value"
    option.metavar = "" if option.is_flag else METAVARS.get(name, name.upper())


def command(
    ctx: typer.Context,
    words: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[COMMAND]...",
            help="A command (and subcommand) to explain.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Show the help of openenv, or of a command (the same as COMMAND --help)."""
    root = ctx.find_root()
    root.command.main(
        args=[*(words or []), "--help"], prog_name=root.info_name, standalone_mode=False
    )
