"""Trajectory files: JSON Lines (one record a line) or Parquet (pyarrow, from the ``data``
extra). The format follows the file's suffix: ``.jsonl`` or ``.parquet``.

A writer never leaves a half-written file where the data belongs: it writes to a temporary file
beside it and moves it into place when closed. Episodes are written whole.

A writer made with ``append=True`` (a recording server's) never replaces what a file holds: a
JSON Lines file is appended to, each episode in one write as it ends, so the file is readable
while the server runs; a Parquet file, which cannot be appended to, is left as it is and the
new episodes go to the first free name with a number (``episodes-1.parquet``).

Layer: client.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
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
    that exists replaces it, unless ``append`` (see the module's docstring): then
    :attr:`path` is where the episodes go, which for Parquet may be a new name.

    Example::

        with TrajectoryWriter("episodes.jsonl") as writer:
            writer.write_episode(records)
    """

    def __init__(self, path: str | os.PathLike[str], *, append: bool = False) -> None:
        self.path = Path(path)
        self.format = _format_of(self.path)
        if self.format == ".parquet":
            _pyarrow()  # fail now, not after recording
        self.episodes = 0
        self.steps = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._appending = append and self.format == ".jsonl"
        if append and self.format == ".parquet":
            self.path = _free_name(self.path)
        self._temporary: Path | None = None
        if self._appending:
            self._file: IO[str] = self.path.open("a", encoding="utf-8")
        else:
            fd, temporary = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
            self._temporary = Path(temporary)
            self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._rows: list[dict[str, Any]] = []
        self._closed = False

    def write_episode(self, records: list[StepRecord]) -> None:
        """Append one whole episode."""
        rows = [record.as_dict() for record in records]
        if self.format == ".jsonl":
            text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
            with _locked(self._file) if self._appending else contextlib.nullcontext():
                self._file.write(text)
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
        if self._temporary is None:  # appended as it went
            return
        if self.format == ".parquet":
            pa = _pyarrow()
            table = pa.Table.from_pylist(self._rows, schema=_schema(pa))
            pa.parquet.write_table(table, self._temporary)
        os.replace(self._temporary, self.path)

    def discard(self) -> None:
        """Close without writing anything more (the temporary file is removed; what was
        appended to a file stays)."""
        self._closed = True
        self._file.close()
        if self._temporary is not None:
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


def _free_name(path: Path) -> Path:
    """``path`` if nothing is there, else the first of ``STEM-1.SUFFIX``, ``STEM-2.SUFFIX``...
    that is free."""
    candidate, number = path, 0
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
    return candidate


@contextlib.contextmanager
def _locked(file: IO[str]) -> Iterator[None]:
    """Hold an exclusive lock on ``file`` (where the system has ``flock``), so that writers of
    two processes appending to one file never interleave their episodes' lines."""
    try:
        import fcntl
    except ImportError:  # Windows: appends of one process only
        yield
        return
    fcntl.flock(file.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def read_records(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every record of a trajectory file, as dicts with the columns of :class:`StepRecord`.

    A JSON Lines file whose last line was cut short (a server killed while it wrote) gives the
    records before it."""
    file = Path(path)
    if _format_of(file) == ".jsonl":
        lines = file.read_text(encoding="utf-8").split("\n")
        unfinished = lines.pop()  # "" when the file ends with its last line's newline
        records = [json.loads(line) for line in lines if line.strip()]
        if unfinished.strip():
            with contextlib.suppress(ValueError):  # cut short: left out
                records.append(json.loads(unfinished))
        return records
    rows: list[dict[str, Any]] = _pyarrow().parquet.read_table(file).to_pylist()
    return rows
