"""What ``openenv record`` shows at the end: a table of the episodes, the steps the environment
answered with an error, and a plot of the returns (PNG, beside the records)."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.table import Table

from openenv_hub.trajectories import RecordingSummary
from openenv_hub_cli._utils import console, err_console

__all__ = ["SHOWN_EPISODES", "plot_path", "print_episodes", "warn_errors", "write_plot"]

SHOWN_EPISODES = 20
"""More episodes than this show the first and last half of them, and a row saying how many
are left out."""


def print_episodes(summary: RecordingSummary, *, max_steps: int) -> None:
    """One row per episode: steps, return, and how it ended."""
    table = Table(box=None, pad_edge=False)
    for column, justify in (("episode", "right"), ("steps", "right"), ("return", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("ended")
    rows = summary.per_episode
    half = SHOWN_EPISODES // 2
    shown = rows if len(rows) <= SHOWN_EPISODES else [*rows[:half], None, *rows[-half:]]
    for row in shown:
        if row is None:
            table.add_row("...", "", "", f"({len(rows) - 2 * half} more)")
            continue
        ended = "done" if row.done else f"truncated (after {max_steps} steps)"
        table.add_row(str(row.number), str(row.steps), f"{row.total_reward:.4g}", ended)
    console.print(table)


def warn_errors(summary: RecordingSummary, policy: str) -> None:
    """Say how many steps the environment refused, with the first reason."""
    if not summary.errors:
        return
    first = summary.errors[0]
    err_console.print(
        f"[yellow]Warning:[/] the environment answered {len(summary.errors)} of "
        f"{summary.steps} steps with an error; the policy {escape(policy)} may send wrong "
        f"actions. First, episode {first.episode} step {first.step}: {escape(first.message)}",
        markup=True,
    )


def plot_path(output: Path) -> Path:
    """Where the plot of ``output`` goes: beside it, ``NAME.png``."""
    return output.with_suffix(".png")


def write_plot(summary: RecordingSummary, output: Path, *, policy: str) -> Path:
    """The return of each episode, as a PNG beside the records."""
    from openenv_hub.support.plots import write_line_plot

    points = [(row.number, row.total_reward) for row in summary.per_episode]
    title = f"{summary.env.name}: return per episode ({policy})"
    return write_line_plot(
        plot_path(output), {"return": points}, title=title, x_label="episode", y_label="return"
    )
