"""The Space as it is now, and how the files of a local bundle differ from its files."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "KEPT_REMOTE_FILES",
    "FileChanges",
    "RemoteFile",
    "RemoteSpace",
    "diff_files",
    "git_blob_id",
]

KEPT_REMOTE_FILES = frozenset({".gitattributes"})
"""Files the Hub manages in every repo; push never deletes them."""


@dataclass(frozen=True)
class RemoteFile:
    """A file in the Space: its git blob id, and its sha256 when stored with LFS."""

    path: str
    blob_id: str | None = None
    sha256: str | None = None


@dataclass
class RemoteSpace:
    """The Space before the push (``exists`` is False when it has to be created)."""

    exists: bool
    sha: str | None = None
    private: bool = False
    files: dict[str, RemoteFile] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    info: Any = None

    @classmethod
    def from_info(cls, info: Any) -> RemoteSpace:
        """From ``space_info(files_metadata=True)``."""
        files = {}
        for sibling in getattr(info, "siblings", None) or []:
            lfs = getattr(sibling, "lfs", None)
            sha256 = getattr(lfs, "sha256", None) or (
                lfs.get("sha256") if isinstance(lfs, dict) else None
            )
            files[sibling.rfilename] = RemoteFile(
                sibling.rfilename, getattr(sibling, "blob_id", None), sha256
            )
        return cls(True, info.sha, bool(info.private), files, info=info)


@dataclass
class FileChanges:
    """Files of the bundle against the Space, each list sorted."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.deleted)


def diff_files(root: Path, files: Iterable[str], remote: dict[str, RemoteFile]) -> FileChanges:
    """Compare the files under ``root`` with the Space's (by git blob id, or sha256 for LFS)."""
    changes = FileChanges()
    local = sorted(files)
    for rel in local:
        theirs = remote.get(rel)
        if theirs is None:
            changes.added.append(rel)
        elif _same(root / rel, theirs):
            changes.unchanged.append(rel)
        else:
            changes.changed.append(rel)
    kept = set(local) | KEPT_REMOTE_FILES
    changes.deleted = sorted(path for path in remote if path not in kept)
    return changes


def _same(path: Path, remote: RemoteFile) -> bool:
    data = path.read_bytes()
    if remote.sha256:
        return hashlib.sha256(data).hexdigest() == remote.sha256
    if remote.blob_id:
        return git_blob_id(data) == remote.blob_id
    return False


def git_blob_id(data: bytes) -> str:
    """The id git gives a file with this content (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
