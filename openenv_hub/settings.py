"""The toolkit's settings that environment variables give, outside a server (the server's own
are in :mod:`openenv_hub.server.settings`), each read here and nowhere else.

- ``OPENENV_HUB_CACHE``: where openenv-hub keeps what it makes and downloads (uv environments,
  Space files, wheels); default ``$XDG_CACHE_HOME/openenv-hub``, or ``~/.cache/openenv-hub``.

Example:
    >>> import os
    >>> os.environ["OPENENV_HUB_CACHE"] = "/tmp/oh-cache"
    >>> str(cache_dir("wheels"))
    '/tmp/oh-cache/wheels'
    >>> del os.environ["OPENENV_HUB_CACHE"]

Layer: core.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(*parts: str) -> Path:
    """The toolkit's cache folder (``$OPENENV_HUB_CACHE``, else ``$XDG_CACHE_HOME/openenv-hub``,
    else ``~/.cache/openenv-hub``), or the folder ``parts`` inside it. Nothing is created."""
    base = os.environ.get("OPENENV_HUB_CACHE")
    if base:
        root = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = Path(xdg) / "openenv-hub"
    return root.joinpath(*parts)
