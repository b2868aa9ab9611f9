"""The server processes of this machine: those the ``local`` and ``uv`` runtimes started, and
``openenv serve`` itself, listed by ``openenv ps`` and stopped by ``openenv stop`` from any
process.

A server process is recorded as one small JSON file in ``servers/`` of the toolkit's cache
folder (:func:`~openenv_hub.support.settings.cache_dir`), named by its pid, with its address, runtime,
source, the process that started it, and its start time (so that a pid the system gave to
another process since is not taken for it). A record whose process is gone is dropped when
listed; one this user did not write (a shared cache folder) is ignored, so nobody else can make
``openenv stop`` signal a process of theirs choosing.

Example:
    >>> for item in ProcessInventory().running():  # doctest: +SKIP
    ...     print(item.name, item.url)

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from openenv_hub.runtimes.base import Running
from openenv_hub.support.settings import cache_dir

__all__ = ["ProcessInventory", "forget_process", "record_process"]


def _records() -> Path:
    return cache_dir("servers")


def _started_at(pid: int) -> str | None:
    """When the process ``pid`` started (clock ticks since boot), where ``/proc`` tells."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]  # field 22: after the name, field 3 is [0]


def record_process(pid: int, *, runtime: str, url: str, source: str) -> None:
    """Record the server process ``pid`` (started by this process) for ``openenv ps``."""
    folder = _records()
    with contextlib.suppress(OSError):  # a read-only cache: the server runs, unlisted
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        entry = {
            "pid": pid, "started": _started_at(pid), "runtime": runtime, "url": url,
            "source": source, "owner_pid": os.getpid(),
        }  # fmt: skip
        temporary = folder / f".{pid}.json.tmp"
        temporary.write_text(json.dumps(entry))
        temporary.replace(folder / f"{pid}.json")


def forget_process(pid: int) -> None:
    """Drop the record of ``pid`` (it stopped)."""
    with contextlib.suppress(OSError):
        (_records() / f"{pid}.json").unlink()


def _alive(entry: dict[str, Any]) -> bool:
    pid = int(entry["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = _started_at(pid)
    return started is None or entry.get("started") in (None, started)


class ProcessInventory:
    """The recorded server processes of this machine that still run."""

    lists = "server processes"

    def asked_by_default(self, *, address: str | None = None) -> bool:
        return True

    def running(self, *, address: str | None = None) -> list[Running]:
        found = []
        for path in sorted(_records().glob("*.json")):
            try:
                if path.stat().st_uid != os.getuid():
                    continue  # not written by this user: not trusted with a pid to signal
                entry = json.loads(path.read_text())
                alive = _alive(entry)
            except (OSError, ValueError, KeyError, TypeError):
                continue  # being written, or not a record of ours
            if not alive:
                forget_process(int(entry["pid"]))
                continue
            owner = entry.get("owner_pid")
            found.append(
                Running(
                    kind="process", id=str(entry["pid"]),
                    name=f"{entry.get('runtime', 'local')}-{entry['pid']}",
                    runtime=str(entry.get("runtime", "local")), status="running",
                    url=str(entry.get("url", "")), source=str(entry.get("source", "")),
                    owner_pid=owner if isinstance(owner, int) else None,
                )
            )  # fmt: skip
        return found

    def remove(self, items: Sequence[Running], *, address: str | None = None) -> None:
        """SIGTERM to each (a server ends its sessions and exits); the record goes with it."""
        for item in items:
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(item.id), signal.SIGTERM)
            forget_process(int(item.id))
