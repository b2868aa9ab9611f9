"""The environments ``runtime="uv"`` made, in :func:`~openenv_hub.runtimes.uv.cache_root`:
what each was made from, its size, when it was last started, and removing the unused ones.

One environment is made per environment folder (by its path) and per Space commit, and each is
kept so the next start is quick; nothing removes them by itself. :func:`cached_envs` lists them
and :func:`remove_cached` removes some, skipping any that a running server uses or that is being
made at that moment (``openenv cache list`` and ``openenv cache prune``).

An entry of the cache may be a symbolic link (an environment moved to another disk, say). It is
never followed to remove anything: removing it removes the link alone, and what it points to
stays where it is (``link`` names it, so the messages can say so).

Example:
    >>> from openenv_hub.runtimes.uv_cache import cached_envs
    >>> [env.name for env in cached_envs() if env.name.startswith("no-such-")]
    []

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from openenv_hub.runtimes.uv import COMPLETE_MARKER, SOURCE_NOTE, cache_root, lock_path

__all__ = ["CachedEnv", "cached_envs", "remove_cached"]


@dataclass(frozen=True)
class CachedEnv:
    """One uv environment of the cache."""

    name: str
    path: Path
    #: The folder or downloaded Space it was made from ("" if made before this was recorded).
    source: str
    #: Bytes that removing it frees: its files not hard-linked elsewhere (uv links the packages'
    #: files from its own cache, which keeps them).
    size_bytes: int
    #: When a server was last started from it (or it was made), seconds since the epoch.
    last_used: float
    #: Whether a running process was started with its python.
    in_use: bool
    #: Where the entry points if it is a symbolic link ("" for a folder); removing it removes
    #: the link only.
    link: str = ""

    def unused_for_days(self, now: float | None = None) -> float:
        return ((now or time.time()) - self.last_used) / 86400


def cached_envs() -> list[CachedEnv]:
    """Every environment in the cache, the longest unused first."""
    root = cache_root()
    if not root.is_dir():
        return []
    running = _running_pythons()
    found = []
    for path in sorted(root.iterdir()):
        if path.is_symlink() and not path.name.endswith(".lock"):
            found.append(_linked(path, running))
        elif path.is_dir():
            found.append(_folder(path, running))
    return sorted(found, key=lambda env: env.last_used)


def _folder(path: Path, running: list[str]) -> CachedEnv:
    marker = path / COMPLETE_MARKER
    note = path / SOURCE_NOTE
    return CachedEnv(
        name=path.name,
        path=path,
        source=note.read_text(encoding="utf-8").strip() if note.is_file() else "",
        size_bytes=_size(path),
        last_used=(marker if marker.is_file() else path).stat().st_mtime,
        in_use=any(_is_inside(python, path) for python in running),
    )


def _linked(path: Path, running: list[str]) -> CachedEnv:
    """A link in the cache: it frees nothing when removed, and is used through either path."""
    target = os.readlink(path)
    places = (path, Path(os.path.realpath(path)))
    return CachedEnv(
        name=path.name,
        path=path,
        source="",
        size_bytes=0,
        last_used=path.lstat().st_mtime,
        in_use=any(_is_inside(python, place) for python in running for place in places),
        link=target,
    )


def remove_cached(envs: Iterable[CachedEnv]) -> list[CachedEnv]:
    """Remove ``envs``, except those in use or being made now; returns those removed."""
    running = _running_pythons()
    removed = []
    for env in envs:
        if env.in_use or any(_is_inside(python, env.path) for python in running):
            continue
        with _unless_busy(env.path) as free:
            if not free:
                continue
            if env.path.is_symlink():
                env.path.unlink()  # the link only: what it points to is not the cache's
            else:
                shutil.rmtree(env.path)
            removed.append(env)
    return removed


@contextlib.contextmanager
def _unless_busy(path: Path) -> Iterator[bool]:
    """Hold the lock that making ``path`` takes, if nobody holds it; yields whether it did."""
    with open(lock_path(path), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _size(path: Path) -> int:
    """Bytes of the files under ``path`` that no other folder links to."""
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                info = os.lstat(os.path.join(folder, name))
                total += info.st_size if info.st_nlink == 1 else 0
    return total


def _running_pythons() -> list[str]:
    """The program path (argv[0]) of every running process this user can read."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                found.append((entry / "cmdline").read_bytes().split(b"\0", 1)[0].decode())
    return found


def _is_inside(program: str, env: Path) -> bool:
    return program.startswith(f"{env}{os.sep}")
