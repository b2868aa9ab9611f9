"""What the commands share: consoles, the error boundary, common arguments, path resolution."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, NoReturn, Protocol, TypeVar

import click
import typer
from rich.console import Console
from rich.markup import escape

from openenv_hub.errors import CommandError, OpenEnvError
from openenv_hub.model.manifest import MANIFEST_FILE

__all__ = [
    "DEBUG_ENV",
    "CommandError",
    "EnvPathArg",
    "console",
    "err_console",
    "resolve_env_dir",
    "run_app",
    "serving_until_stopped",
]

DEBUG_ENV = "OPENENV_DEBUG"


class _Stoppable(Protocol):
    def stop(self) -> None: ...


P = TypeVar("P", bound=_Stoppable)

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)

EnvPathArg = Annotated[
    Path,
    typer.Argument(
        metavar="ENV",
        help="An environment folder (with openenv.yaml).",
        show_default="current folder",
    ),
]


def resolve_env_dir(path: Path) -> Path:
    """The environment folder ``path``, checked to exist and to hold an ``openenv.yaml``."""
    if not path.exists():
        raise CommandError(f"Path does not exist: {path}")
    if not path.is_dir():
        raise CommandError(f"Not a folder: {path}")
    if not (path / MANIFEST_FILE).is_file():
        raise CommandError(
            f"No {MANIFEST_FILE} in {path.resolve()}: not an environment folder.",
            hint="Run the command inside an environment, or create one with 'openenv init NAME'.",
        )
    return path.resolve()


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no")


def run_app(
    app: typer.Typer,
    args: list[str] | None = None,
    *,
    prog_name: str = "openenv",
    decorate: Callable[[object], None] | None = None,
) -> NoReturn:
    """Run the CLI; turn every error into one message and an exit code (the error boundary).
    ``decorate`` may change the click command first (its help)."""
    command = typer.main.get_command(app)
    if decorate is not None:
        decorate(command)
    try:
        code = command.main(args=args, prog_name=prog_name, standalone_mode=False)
    except KeyboardInterrupt:
        code = _cancelled()
    except Exception as exc:
        code = _exit_code(exc)
    sys.exit(code if isinstance(code, int) else 0)


def _exit_code(exc: Exception) -> int:
    """Exit, Abort and usage errors of click (or typer's copy of it); else report the error."""
    kind = type(exc).__name__
    if kind == "Exit" and isinstance(getattr(exc, "exit_code", None), int):
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if kind == "Abort":
        return _cancelled()
    if isinstance(exc, (click.ClickException, typer.exceptions.TyperException)) and hasattr(
        exc, "show"
    ):
        exc.show()
        return int(getattr(exc, "exit_code", 2))
    report_error(exc)
    return 1


def _cancelled() -> int:
    err_console.print("Cancelled.")
    return 130


def report_error(exc: BaseException) -> None:
    """``Error: ...`` and its hint; the traceback only when ``OPENENV_DEBUG`` is set."""
    if debug_enabled():
        traceback.print_exception(type(exc), exc, exc.__traceback__)
    if isinstance(exc, OpenEnvError):
        err_console.print(f"[bold red]Error:[/] {escape(str(exc))}", markup=True)
    else:
        err_console.print(
            f"[bold red]Unexpected error:[/] {type(exc).__name__}: {escape(str(exc))}", markup=True
        )
    hint = getattr(exc, "hint", "")
    if hint:
        err_console.print(f"[yellow]Hint:[/] {escape(hint)}", markup=True)
    if not debug_enabled():
        err_console.print(f"(set {DEBUG_ENV}=1 to see the traceback)", style="dim")


@contextlib.contextmanager
def serving_until_stopped(start: Callable[[], P]) -> Iterator[P]:
    """Start servers with ``start()`` and hand them to the block; on Ctrl-C or SIGTERM (what a
    process manager sends to stop), or when the block ends or fails, stop them and say so. A
    signal while starting stops what started too (through the providers' exit hook)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    in_main = threading.current_thread() is threading.main_thread()  # only it gets signals
    previous = signal.signal(signal.SIGTERM, interrupt) if in_main else None
    try:
        servers = start()
        try:
            yield servers
        except KeyboardInterrupt:
            pass
        finally:
            servers.stop()
            console.print("Stopped.")
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
