"""What the training examples share: the device they train on, and what they show at the end
(a table of the rewards logged at each step, and a plot of them beside ``log_history.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

GPU_HINT = (
    "no CUDA GPU found, training on the CPU; for a GPU, install a CUDA build of torch "
    "(https://pytorch.org/get-started/locally/) and run the same command"
)


def device_options(*, cpu: bool = False) -> tuple[dict[str, Any], str]:
    """``GRPOConfig`` options for the device this machine has, and a line saying which.

    A CUDA GPU trains in bf16 where it can (else fp16); without one, or with ``cpu``, the CPU
    trains in full precision (TRL's default bf16 would refuse to start there).
    """
    import torch

    if cpu:
        return {"use_cpu": True, "bf16": False}, "training on the CPU"
    if torch.cuda.is_available():
        bf16 = torch.cuda.is_bf16_supported()
        name = torch.cuda.get_device_name(0)
        return {
            "bf16": bf16,
            "fp16": not bf16,
        }, f"training on {name} ({'bf16' if bf16 else 'fp16'})"
    return {"use_cpu": True, "bf16": False}, GPU_HINT


def reward_rows(history: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The reward columns TRL logged, and the entries (one per logged step) that have them."""
    columns = sorted({key for entry in history for key in entry if key.startswith("reward")})
    rows = [entry for entry in history if any(key in entry for key in columns)]
    return columns, rows


def save_log(trainer: Any, output_dir: Path, *, title: str) -> None:
    """Write the trainer's logged metrics to log_history.json, print the rewards of each step
    as a table, and plot them in rewards.png beside it (when matplotlib is installed)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    history = trainer.state.log_history
    (output_dir / "log_history.json").write_text(json.dumps(history, indent=1))
    columns, rows = reward_rows(history)
    table = Table(title=f"Rewards logged by step ({title})", box=None, pad_edge=False)
    for column in ["step", *columns]:
        table.add_column(column, justify="right")
    for entry in rows:
        values = [entry.get(column) for column in columns]
        table.add_row(
            str(entry.get("step")), *(f"{v:.4g}" if v is not None else "" for v in values)
        )
    console = Console(highlight=False, soft_wrap=True, width=max(100, 24 * (len(columns) + 1)))
    console.print(table)
    _plot(output_dir / "rewards.png", columns, rows, title, console)


def _plot(
    path: Path, columns: list[str], rows: list[dict[str, Any]], title: str, console: Console
) -> None:
    from openenv_hub.support.plots import plots_available, write_line_plot

    if not plots_available():
        console.print('No plot: pip install "openenv-hub[plots]" for one.', markup=False)
        return
    series = {
        column: [(entry["step"], entry[column]) for entry in rows if column in entry]
        for column in columns
        if column.endswith("mean") or column == "reward"
    }
    write_line_plot(path, series, title=f"{title}: rewards by step", x_label="step")
    console.print(f"Plot of the rewards: {path}")
