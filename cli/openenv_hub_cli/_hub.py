"""What the Hub commands (push, fork, install, pull, versions) share: options and parsing."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from openenv_hub_cli._utils import CommandError, err_console

if TYPE_CHECKING:
    from rich.status import Status

__all__ = [
    "EnvVarOption",
    "HardwareOption",
    "SecretOption",
    "SpaceArg",
    "Steps",
    "TokenOption",
    "parse_secrets",
    "parse_variables",
    "progress",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Hugging Face token. Default: $HF_TOKEN, then your saved login (hf auth login).",
        show_default=False,
    ),
]
EnvVarOption = Annotated[
    list[str] | None,
    typer.Option(
        "--env-var", "-e", help="Space variable KEY=VALUE (repeatable).", show_default=False
    ),
]
SecretOption = Annotated[
    list[str] | None,
    typer.Option(
        "--secret",
        "-s",
        help="Space secret KEY=VALUE, or KEY to take the value from $KEY (repeatable). "
        "Values are never printed.",
        show_default=False,
    ),
]
SpaceArg = Annotated[
    str, typer.Argument(metavar="SPACE", help="The Space, NS/NAME.", show_default=False)
]
HardwareOption = Annotated[
    str | None, typer.Option("--hardware", "-H", help="Space hardware, e.g. cpu-basic or t4-small.")
]


def parse_variables(values: Sequence[str] | None, option: str = "--env-var") -> dict[str, str]:
    """``["K=V", ...]`` -> ``{"K": "V"}``; the value may contain ``=``. None is none given."""
    pairs: dict[str, str] = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not _NAME.match(key):
            raise CommandError(
                f"{option} takes KEY=VALUE with KEY a variable name, got {item!r}.",
                hint=f"Example: {option} LOG_LEVEL=debug",
            )
        pairs[key] = value
    return pairs


def parse_secrets(values: Sequence[str] | None, option: str = "--secret") -> dict[str, str]:
    """Like :func:`parse_variables`, but ``KEY`` alone reads ``$KEY``; values never echoed."""
    pairs: dict[str, str] = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        key = key.strip()
        if not _NAME.match(key):
            raise CommandError(
                f"{option} takes KEY=VALUE or KEY, with KEY a variable name (got a bad name).",
                hint=f"Example: {option} OPENAI_API_KEY (reads $OPENAI_API_KEY)",
            )
        if not sep:
            if not os.environ.get(key):
                raise CommandError(
                    f"{option} {key}: ${key} is not set.",
                    hint=f"Export {key} first, or pass {option} {key}=VALUE.",
                )
            value = os.environ[key]
        pairs[key] = value
    return pairs


class Steps:
    """The step a command is at, shown on stderr: call it with each new step.

    At a terminal it is a spinner (``status``), which :meth:`paused` takes off the screen while
    the user answers a question; elsewhere each step is a line of its own.
    """

    def __init__(self, status: Status | None = None) -> None:
        self._status = status

    def __call__(self, text: str) -> None:
        if self._status is None:
            err_console.print(f"{text}...", style="dim")
        else:
            self._status.update(text)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No spinner inside the block (a prompt would be drawn over)."""
        if self._status is None:
            yield
            return
        self._status.stop()
        try:
            yield
        finally:
            self._status.start()


@contextmanager
def progress(first: str) -> Iterator[Steps]:
    """Shows the current step on stderr: a spinner at a terminal (starting with ``first``),
    else one line per step reported through the yielded :class:`Steps`."""
    if not err_console.is_terminal:
        yield Steps()
        return
    with err_console.status(first) as status:
        yield Steps(status)
