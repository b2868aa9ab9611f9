"""The NDJSON body of ``POST .../commit/{revision}``, read from disk a line at a time.

The body is spooled to a file as it arrives (:func:`spool_body`), never held whole. Each line is
one item: a header, a file (its content in base64), or a deletion. A line under
:data:`SMALL_LINE` is parsed as JSON; a longer one holds a big file, whose base64 content is
decoded in pieces into a file of its own, so a commit of any size (up to LocalHub's body limit)
takes a few megabytes of memory. Such a line must start as ``huggingface_hub`` writes it,
``{"key": "file", "value": {"content": "...``; any other long line is read whole.

Layer: runtimes.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .errors import HubError
from .gitops import DeletePath, FileOp, PutFile

__all__ = ["CommitPayload", "parse_commit_payload", "read_commit_body", "spool_body"]

SMALL_LINE = 1 << 20
_CHUNK = 1 << 20
_BIG_FILE_START = re.compile(
    rb'\s*\{\s*"key"\s*:\s*"file"\s*,\s*"value"\s*:\s*\{\s*"content"\s*:\s*"'
)


@dataclass
class CommitPayload:
    """A parsed NDJSON commit request."""

    summary: str
    description: str = ""
    parent_commit: str | None = None
    operations: list[FileOp] = field(default_factory=list)

    @property
    def message(self) -> str:
        """Git commit message: summary, blank line, description."""
        return f"{self.summary}\n\n{self.description}" if self.description else self.summary


async def spool_body(chunks: AsyncIterator[bytes], target: Path) -> Path:
    """Write a request body to ``target`` as it arrives; returns ``target``."""
    with target.open("wb") as out:
        async for chunk in chunks:
            out.write(chunk)
    return target


def parse_commit_payload(body: bytes) -> CommitPayload:
    """Parse a commit body held in memory (small bodies, tests).

    Raises:
        HubError: 400 for malformed lines, a missing header, or LFS files.
    """
    lines = enumerate(body.splitlines(), start=1)
    return _payload(_json(line, number) for number, line in lines if line.strip())


def read_commit_body(path: Path, spool_dir: Path) -> CommitPayload:
    """Parse the commit body in ``path``; big files' contents go to files in ``spool_dir``.

    Raises:
        HubError: 400 for malformed lines, a missing header, or LFS files.
    """
    with path.open("rb") as body:
        return _payload(_items(body, spool_dir))


def _items(body: IO[bytes], spool_dir: Path) -> Iterator[Any]:
    """Each item of the body, as parsed JSON (a big file's ``content`` replaced by its file)."""
    number = 0
    while True:
        head = body.readline(SMALL_LINE)
        if not head:
            return
        number += 1
        if head.endswith(b"\n") or len(head) < SMALL_LINE:
            if head.strip():
                yield _json(head, number)
            continue
        start = _BIG_FILE_START.match(head)
        if start is None:
            yield _json(head + body.readline(), number)  # an unusual long line: read it whole
            continue
        target = spool_dir / f"content-{number}"
        rest = _decode_content(head[start.end() :], body, target)
        item = _json(head[: start.end()] + b'"' + rest, number)
        item["value"]["content"] = target
        yield item


def _decode_content(first: bytes, body: IO[bytes], target: Path) -> bytes:
    """Decode base64 from ``first`` and then ``body`` up to the closing quote into ``target``;
    returns the rest of the line after that quote."""
    pending = first
    with target.open("wb") as out:
        while True:
            end = pending.find(b'"')
            data = pending if end == -1 else pending[:end]
            usable = len(data) if end != -1 else len(data) - len(data) % 4
            out.write(_b64(data[:usable]))
            if end != -1:
                rest = pending[end + 1 :]
                return rest if rest.endswith(b"\n") else rest + body.readline()
            more = body.readline(_CHUNK)  # never past the end of this line
            if not more or (more.endswith(b"\n") and b'"' not in more):
                raise HubError.bad_request("A commit line ends inside a file's content")
            pending = data[usable:] + more


def _b64(data: bytes, path: str | None = None) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error:
        where = f" for {path!r}" if path else ""
        raise HubError.bad_request(f"Invalid base64 content{where}") from None


def _json(line: bytes, number: int) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        raise HubError.bad_request(f"Line {number} is not a commit item") from None


def _payload(items: Iterator[Any]) -> CommitPayload:
    header: dict[str, Any] | None = None
    operations: list[FileOp] = []
    for number, item in enumerate(items, start=1):
        try:
            key, value = item["key"], item["value"]
        except (KeyError, TypeError):
            raise HubError.bad_request(f"Line {number} is not a commit item") from None
        if key == "header":
            header = value
        else:
            operations.append(_operation(key, value))
    if not header or not header.get("summary"):
        raise HubError.bad_request("The commit needs a header line with a 'summary'")
    return CommitPayload(
        summary=header["summary"],
        description=header.get("description") or "",
        parent_commit=header.get("parentCommit"),
        operations=operations,
    )


def _operation(key: str, value: Any) -> FileOp:
    path = value.get("path") if isinstance(value, dict) else None
    if not isinstance(path, str):
        raise HubError.bad_request(f"Commit line {key!r} needs a string 'path'")
    if key == "file":
        if value.get("encoding", "base64") != "base64":
            raise HubError.bad_request("Only base64-encoded file content is supported")
        content = value.get("content", "")
        if isinstance(content, Path):
            return PutFile(path, source=content)
        if not isinstance(content, str):
            raise HubError.bad_request(f"Invalid base64 content for {path!r}")
        return PutFile(path, _b64(content.encode(), path))
    if key in ("deletedFile", "deletedFolder"):
        return DeletePath(path, folder=key == "deletedFolder")
    if key == "lfsFile":
        raise HubError.bad_request(
            f"LFS is not supported by LocalHub ({path!r}); preupload always answers 'regular'"
        )
    raise HubError.bad_request(f"Unknown commit operation {key!r}")
