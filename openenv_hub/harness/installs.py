"""Where a harness is installed on the host, and reading what it wrote without following links.

Layer: client.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from openenv_hub.errors import ConfigurationError

__all__ = ["find_executable", "read_regular_file"]


def find_executable(name: str, given: str | os.PathLike[str] | None, install: str) -> str:
    """The absolute path of the harness's command: ``given``, else ``name`` on ``PATH``.

    Raises:
        ConfigurationError: it is not there (the message says how to install it).
    """
    if given is not None:
        path = Path(given).absolute()
        if not path.is_file():
            raise ConfigurationError(f"{name}: {path} does not exist; install it with: {install}")
        return str(path)
    found = shutil.which(name)
    if found is None:
        raise ConfigurationError(
            f"{name} is not installed (not on PATH); install it with: {install}, or pass its path"
        )
    return os.path.abspath(found)


def read_regular_file(path: Path, max_bytes: int = 1 << 20) -> str | None:
    """The text of ``path`` if it is a regular file (not a link: a harness may leave one
    pointing anywhere), at most ``max_bytes``; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, max_bytes).decode("utf-8", "replace")
    finally:
        os.close(fd)
