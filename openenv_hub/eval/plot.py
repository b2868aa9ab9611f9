"""The plot of a run: the distribution of the return, and pass@k against k (a PNG).

Layer: client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openenv_hub.errors import DependencyNotInstalledError

__all__ = ["write_plot"]


def write_plot(rows: list[dict[str, Any]], summary: dict[str, Any], target: Path) -> Path:
    """Draw the histogram of returns and the pass@k curve into ``target``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        raise DependencyNotInstalledError(
            "matplotlib", "eval", feature="The plot of a run"
        ) from None
    figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 3.5))
    left.hist([float(r["return"]) for r in rows], bins=20, color="#4c72b0")
    left.set(title="Return per rollout", xlabel="return", ylabel="rollouts")
    ks = [int(k) for k in summary["pass_at_k"]]
    right.plot(ks, list(summary["pass_at_k"].values()), marker="o", color="#dd8452")
    right.set(title="pass@k", xlabel="k", ylabel="pass@k", ylim=(0, 1.05), xticks=ks)
    figure.tight_layout()
    figure.savefig(target, dpi=100)
    pyplot.close(figure)
    return target
