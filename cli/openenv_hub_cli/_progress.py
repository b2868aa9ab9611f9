"""Long waits shown on stderr while a command waits: a live line per wait at a terminal
(spinner, stage, seconds, last output line), plain lines otherwise (each new stage, then every
:data:`HEARTBEAT_S` seconds while it lasts). The waits report through
:mod:`openenv_hub.support.progress`; :func:`showing_progress` listens for the block it wraps."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from openenv_hub.support.progress import ProgressEvent, listening
from openenv_hub_cli._utils import err_console

__all__ = ["HEARTBEAT_S", "LiveLines", "PlainLines", "showing_progress"]

HEARTBEAT_S = 15.0


@contextmanager
def showing_progress(console: Console = err_console) -> Iterator[None]:
    """Show every wait reported inside the block."""
    display: LiveLines | PlainLines = (
        LiveLines(console) if console.is_terminal else PlainLines(console)
    )
    with listening(display.on_event):
        try:
            yield
        finally:
            display.close()


def _seconds(event: ProgressEvent) -> str:
    return f"{event.elapsed_s:.0f} s"


class PlainLines:
    """A line for each new stage, and one every HEARTBEAT_S seconds while a stage lasts."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.shown: dict[str, tuple[str, float]] = {}  # task -> (stage, elapsed when shown)

    def on_event(self, event: ProgressEvent) -> None:
        stage, at = self.shown.get(event.task, ("", -HEARTBEAT_S))
        if event.finished:
            self.shown.pop(event.task, None)
            self._print(f"{event.task}: {event.stage} ({_seconds(event)})")
        elif event.stage != stage:
            self.shown[event.task] = (event.stage, event.elapsed_s)
            self._print(f"{event.task}: {event.stage} ({_seconds(event)})")
        elif event.elapsed_s - at >= HEARTBEAT_S:
            self.shown[event.task] = (stage, event.elapsed_s)
            last = f": {event.last_line[:200]}" if event.last_line else ""
            self._print(f"{event.task}: still {event.stage} ({_seconds(event)}){last}")

    def _print(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, style="dim")

    def close(self) -> None:
        self.shown.clear()


class LiveLines:
    """A rich Live display of the waits under way; a line stays behind for each that ends."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.lock = threading.Lock()
        self.events: dict[str, tuple[ProgressEvent, float]] = {}  # task -> (event, received)
        self.spinners: dict[str, Spinner] = {}
        self.live: Live | None = None

    def on_event(self, event: ProgressEvent) -> None:
        with self.lock:
            if event.finished:
                self.events.pop(event.task, None)
                self.spinners.pop(event.task, None)
                mark = "[red]failed[/]" if event.failed else "[green]done[/]"
                self.console.print(
                    f"{escape(event.task)}: {escape(event.stage)} ({_seconds(event)}) {mark}",
                    highlight=False,
                )
            else:
                self.events[event.task] = (event, time.monotonic())
            if self.events and self.live is None:
                self.live = Live(self, console=self.console, refresh_per_second=4, transient=True)
                self.live.start()
            elif not self.events and self.live is not None:
                self.live.stop()
                self.live = None

    def __rich__(self) -> Group:
        now = time.monotonic()
        rows = []
        for event, received in list(self.events.values()):
            table = Table.grid(padding=(0, 1))
            seconds = event.elapsed_s + now - received
            label = Text(f"{event.task}: {event.stage} ({seconds:.0f} s)")
            spinner = self.spinners.setdefault(event.task, Spinner("dots"))
            table.add_row(spinner, label)
            if event.last_line:
                width = max(20, self.console.width - 4)
                table.add_row("", Text(event.last_line[:width], style="dim", no_wrap=True))
            rows.append(table)
        return Group(*rows)

    def close(self) -> None:
        with self.lock:
            if self.live is not None:
                self.live.stop()
                self.live = None
