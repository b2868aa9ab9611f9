"""Reward curves as PNG files, for ``openenv record`` and the training examples.

matplotlib (the ``plots`` extra) draws them through its object-oriented API only: no
``pyplot``, no backend switch, so nothing changes for a notebook or a program that draws its own
figures. A missing matplotlib raises :class:`~openenv_hub.errors.DependencyNotInstalledError`
naming the extra.

Example:
    >>> write_line_plot(  # doctest: +SKIP
    ...     "rewards.png", {"return": [(0, 1.0), (1, 0.5)]}, title="echo_env", x_label="episode"
    ... )

Layer: core.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from openenv_hub.errors import DependencyNotInstalledError

__all__ = ["plots_available", "require_plots", "write_line_plot"]

Series = Sequence[tuple[float, float]]


def plots_available() -> bool:
    """Whether matplotlib can be imported."""
    try:
        import matplotlib  # noqa: F401 - imported to find out
    except ImportError:
        return False
    return True


def require_plots(feature: str = "A reward plot") -> None:
    """Raise :class:`DependencyNotInstalledError` (``pip install "openenv-hub[plots]"``) if
    matplotlib is missing."""
    if not plots_available():
        raise DependencyNotInstalledError("matplotlib", "plots", feature=feature)


def write_line_plot(
    path: str | Path,
    series: Mapping[str, Series],
    *,
    title: str,
    x_label: str,
    y_label: str = "reward",
) -> Path:
    """Draw each named series of ``(x, y)`` points (``x`` a count: episodes, steps) as a line
    with markers; write a PNG.

    Points whose ``y`` is not a finite number are left out. Returns the path written.
    """
    require_plots()
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    axes = figure.add_subplot()
    for label, points in series.items():
        kept = [(x, y) for x, y in points if isinstance(y, (int, float)) and math.isfinite(y)]
        if kept:
            xs = [x for x, _ in kept]
            ys = [y for _, y in kept]
            axes.plot(xs, ys, marker="o", markersize=3, label=label)
    axes.set_title(title)
    axes.set_xlabel(x_label)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel(y_label)
    axes.grid(alpha=0.3)
    if len(series) > 1:
        axes.legend()
    target = Path(path)
    figure.savefig(target, format="png")
    return target
