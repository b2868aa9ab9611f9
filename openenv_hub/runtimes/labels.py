"""The labels on everything a provider starts outside this process, and who owns it.

Every container and Swarm service gets ``openenv-hub.managed=true``, the runtime that made it,
its URL and its source (an image, a Space), and the owner: this process (``owner`` is unique per
process, ``owner-pid`` is its pid). ``openenv ps`` lists by these labels; ``openenv stop --all``
removes by them; the reaper of :mod:`openenv_hub.runtimes._reaper` removes what an owner left
behind when that process dies without stopping it.

Layer: runtimes.
"""

from __future__ import annotations

import os
import uuid

__all__ = [
    "MANAGED",
    "OWNER",
    "OWNER_PID",
    "RUNTIME",
    "SOURCE",
    "URL",
    "labels_for",
    "owner_id",
]

PREFIX = "openenv-hub"
MANAGED = f"{PREFIX}.managed"
RUNTIME = f"{PREFIX}.runtime"
OWNER = f"{PREFIX}.owner"
OWNER_PID = f"{PREFIX}.owner-pid"
SOURCE = f"{PREFIX}.source"
URL = f"{PREFIX}.url"

_owner: tuple[int, str] | None = None


def owner_id() -> str:
    """This process's owner label (new after a fork, since the pid is part of it)."""
    global _owner
    pid = os.getpid()
    if _owner is None or _owner[0] != pid:
        _owner = (pid, f"{pid}-{uuid.uuid4().hex[:12]}")
    return _owner[1]


def labels_for(runtime: str, *, source: str, url: str = "", **extra: str) -> dict[str, str]:
    """The labels of one container or service started by ``runtime`` from ``source``."""
    labels = {
        MANAGED: "true",
        RUNTIME: runtime,
        OWNER: owner_id(),
        OWNER_PID: str(os.getpid()),
        SOURCE: source,
        **{f"{PREFIX}.{key.replace('_', '-')}": value for key, value in extra.items()},
    }
    if url:
        labels[URL] = url
    return labels
