"""Deletes this process's Daytona sandboxes when it dies, however it dies (the sandboxes'
counterpart of :mod:`openenv_hub.runtimes._reaper`).

A process that creates sandboxes also starts one Daytona reaper: ``python -m
openenv_hub.runtimes._daytona_reaper OWNER``, in a session of its own, reading a pipe whose only
writer is the starting process. For each Daytona it creates sandboxes on, the process writes one
line to the pipe: ``{"api_url", "api_key", "target"}`` as JSON (the key goes through the pipe,
never a command line). When the process exits, even by SIGKILL, the kernel closes the pipe; the
reaper then deletes every sandbox of those Daytonas labelled with ``OWNER`` and exits. After a
normal exit the providers have already deleted theirs at ``atexit`` and the reaper finds none.

A Daytona that fails to list or delete (busy, restarting) is tried again every two seconds for
:data:`REAP_FOR_S`, except one on a loopback address that refuses connections: that is a local
Daytona that has stopped, and a stopping local Daytona removes its sandboxes itself.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time
from urllib.parse import urlsplit

import openenv_hub.runtimes.labels as labels
from openenv_hub.protocol.urls import is_loopback
from openenv_hub.runtimes._daytona_api import OWNER_LABEL, daytona_client
from openenv_hub.runtimes._reaper import tell_watcher

__all__ = ["REAP_FOR_S", "reap_sandboxes", "watch_sandboxes"]

#: How long the reaper keeps trying a Daytona that fails to list or delete (busy, restarting).
REAP_FOR_S = 300.0


def watch_sandboxes(api_url: str, api_key: str, target: str | None) -> None:
    """Make sure this process's Daytona reaper runs and knows the Daytona at ``api_url``."""
    place = json.dumps({"api_url": api_url, "api_key": api_key, "target": target})
    tell_watcher("openenv_hub.runtimes._daytona_reaper", place)


def reap_sandboxes(api_url: str, api_key: str, target: str | None, owner: str) -> int:
    """Delete the sandboxes of ``owner`` on the Daytona at ``api_url``; return how many are
    left (0: none). Raises what the Daytona client raises when it cannot list them."""
    from daytona import ListSandboxesQuery

    client = daytona_client(api_url, api_key, target)
    left = 0
    for sandbox in list(client.list(ListSandboxesQuery(labels={OWNER_LABEL: owner}))):
        try:
            client.delete(sandbox)
        except Exception:
            left += 1
    return left


def _stopped_locally(api_url: str) -> bool:
    """Whether ``api_url`` is on a loopback address where nothing listens any more."""
    if not is_loopback(api_url):
        return False
    parts = urlsplit(api_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    except OSError:
        return False
    return False


def _reaped(place: dict[str, str | None], owner: str) -> bool:
    """Whether no sandbox of ``owner`` is left at ``place`` (False: try again)."""
    if _stopped_locally(place["api_url"] or ""):
        return True
    try:
        return reap_sandboxes(place["api_url"] or "", place["api_key"] or "", place["target"],
                              owner) == 0  # fmt: skip
    except Exception:  # unreachable or busy: the next round tries again
        return False


def _main(owner: str) -> None:
    places = []
    for line in sys.stdin.buffer.read().decode().splitlines():  # returns when the owner is gone
        with contextlib.suppress(ValueError):
            places.append(json.loads(line))
    deadline = time.monotonic() + REAP_FOR_S
    while places:
        places = [place for place in places if not _reaped(place, owner)]
        if time.monotonic() > deadline:
            return
        if places:
            time.sleep(2.0)


if __name__ == "__main__":
    _main(sys.argv[1] if len(sys.argv) > 1 else labels.owner_id())
