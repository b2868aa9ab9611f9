"""Cancels this process's Jobs when it dies, however it dies (the Jobs' counterpart of
:mod:`openenv_hub.runtimes._reaper`).

A process that starts Jobs also starts one Jobs reaper: ``python -m
openenv_hub.runtimes._jobs_reaper OWNER``, in a session of its own, reading a pipe whose only
writer is the starting process. For each Hub and namespace the process runs Jobs in, it writes
one line to the pipe: ``{"endpoint", "namespace", "token"}`` as JSON (the token goes through the
pipe, never a command line or the environment). When the process exits, even by SIGKILL, the
kernel closes the pipe; the reaper then cancels every Job of those namespaces labelled with
``OWNER`` that has not finished, and exits. After a normal exit the providers have already
cancelled their Jobs at ``atexit`` and the reaper finds none running.
"""

from __future__ import annotations

import contextlib
import json
import sys

import openenv_hub.runtimes.labels as labels
from openenv_hub.runtimes._reaper import tell_watcher

__all__ = ["OWNER_LABEL", "reap_jobs", "watch_jobs"]

#: The Job label naming the process that started a Job (labels take no dots).
OWNER_LABEL = "openenv-hub-owner"


def watch_jobs(endpoint: str, namespace: str, token: str) -> None:
    """Make sure this process's Jobs reaper runs and knows the namespace ``namespace`` of
    ``endpoint``."""
    place = json.dumps({"endpoint": endpoint, "namespace": namespace, "token": token})
    tell_watcher("openenv_hub.runtimes._jobs_reaper", place)


def reap_jobs(endpoint: str, namespace: str, token: str, owner: str) -> int:
    """Cancel the unfinished Jobs of ``owner`` in ``namespace``; return how many."""
    from openenv_hub.hub import JobsClient

    client = JobsClient(endpoint=endpoint, token=token, namespace=namespace)
    cancelled = 0
    for job in client.labelled({OWNER_LABEL: owner}):
        if not job.finished:
            with contextlib.suppress(Exception):
                client.cancel(job.id)
                cancelled += 1
    return cancelled


def _main(owner: str) -> None:
    places = sys.stdin.buffer.read().decode().splitlines()  # returns when the owner is gone
    for line in places:
        with contextlib.suppress(Exception):
            place = json.loads(line)
            reap_jobs(place["endpoint"], place["namespace"], place["token"], owner)


if __name__ == "__main__":
    _main(sys.argv[1] if len(sys.argv) > 1 else labels.owner_id())
