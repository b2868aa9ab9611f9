"""Trajectory files: JSON Lines (one record a line) or Parquet (pyarrow, from the ``data``
extra). The format follows the file's suffix: ``.jsonl`` or ``.parquet``.

A writer never leaves a half-written file where the data belongs: it writes to a temporary file
beside it and moves it into place when closed. Episodes are written whole.

Layer: client.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError
from openenv_hub.trajectories.records import COLUMNS, StepRecord

__all__ = ["FORMATS", "TrajectoryWriter", "read_records"]

FORMATS = (".jsonl", ".parquet")


def _format_of(path: Path) -> str:
    if path.suffix not in FORMATS:
        raise ConfigurationError(
            f"Cannot tell the format of '{path}': name the file *.jsonl or *.parquet"
        )
    return path.suffix


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise DependencyNotInstalledError(
            "pyarrow", "data", feature="Writing trajectories as Parquet"
        ) from None
    return pyarrow


def _schema(pa: Any) -> Any:
    text, number = pa.string(), pa.float64()
    types = {
        "episode": pa.int64(),
        "step": pa.int64(),
        "reward": number,
        "attributed_reward": number,
        "started_at": number,
        "duration_ms": number,
        "done": pa.bool_(),
        "truncated": pa.bool_(),
    }
    return pa.schema([(name, types.get(name, text)) for name in COLUMNS])


class TrajectoryWriter:
    """Writes recorded episodes to ``path`` (``.jsonl`` or ``.parquet``).

    Use it as a context manager; the file appears when the writer closes. Writing to a file
    that exists replaces it.

    Example::

        with TrajectoryWriter("episodes.jsonl") as writer:
            writer.write_episode(records)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.format = _format_of(self.path)
        if self.format == ".parquet":
            _pyarrow()  # fail now, not after recording
        self.episodes = 0
        self.steps = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        self._temporary = Path(temporary)
        self._file: IO[str] = os.fdopen(fd, "w", encoding="utf-8")
        self._rows: list[dict[str, Any]] = []
        self._closed = False

    def write_episode(self, records: list[StepRecord]) -> None:
        """Append one whole episode."""
        rows = [record.as_dict() for record in records]
        if self.format == ".jsonl":
            self._file.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            self._file.flush()
        else:
            self._rows.extend(rows)
        self.episodes += 1
        self.steps += len(rows)

    def close(self) -> None:
        """Finish the file and move it into place (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._file.close()
        if self.format == ".parquet":
            pa = _pyarrow()
            table = pa.Table.from_pylist(self._rows, schema=_schema(pa))
            pa.parquet.write_table(table, self._temporary)
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        """Close without writing anything (the temporary file is removed)."""
        self._closed = True
        self._file.close()
        self._temporary.unlink(missing_ok=True)

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every record of a trajectory file, as dicts with the columns of :class:`StepRecord`."""
    file = Path(path)
    if _format_of(file) == ".jsonl":
        with file.open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]
    rows: list[dict[str, Any]] = _pyarrow().parquet.read_table(file).to_pylist()
    return rows
