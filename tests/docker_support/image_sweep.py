"""Removes, when a test run ends, the images it built on the private Docker engine.

Every run builds images under new tags (LocalHub tags each Space image with its commit,
``openenv build`` and the runtime tests tag their own); kept, they filled the engine's disk by
some 50 GB over a few dozen runs. Only the engine of ``.ci/docker/setup.sh`` is swept (an engine
of the user's own, named by ``DOCKER_HOST``, is left alone), and only images that were not there
when the run began, and dangling ones; the base image and the wheelhouses, kept between runs on
purpose, stay.

Several runs may share the engine (two checkouts, or two people, on one machine). An image one
run made after another run began is, to the other, an image it made too; and a build under way
has an untagged image between two of its steps, which a prune takes ("No such image: sha256:..."
at its next step). So a run sweeps only when no other run is under way: each run holds a shared
lock on :data:`RUNS_LOCK` in the engine's state folder while it runs, and at its end sweeps if it
can take the lock alone; else it writes the images it made to :data:`UNSWEPT`, for the last run
to remove with its own. A run that starts while a sweep is under way waits for it.
"""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path
from typing import IO

import pytest

from docker_support.engine import BASE_IMAGE, default_socket, docker, docker_host

KEPT = (BASE_IMAGE, "localhub-wheelhouse")  # an image's name, or a repository's
RUNS_LOCK = "test-runs.lock"
UNSWEPT = "unswept-images"
_BEFORE = pytest.StashKey[set[str]]()
_RUN = pytest.StashKey[IO[str]]()


def private_engine() -> bool:
    """Whether the engine in use is the private one of ``.ci/docker/setup.sh``."""
    return docker_host() == f"unix://{default_socket()}"


def images() -> set[str]:
    """The ids of the engine's tagged and dangling images (not builds' intermediate layers)."""
    listed = docker("images", "--quiet", "--no-trunc", check=False, timeout=60)
    return set(listed.stdout.split()) if listed.returncode == 0 else set()


def kept() -> set[str]:
    ids: set[str] = set()
    for name in KEPT:
        listed = docker("images", "--quiet", "--no-trunc", name, check=False, timeout=60)
        ids.update(listed.stdout.split())
    return ids


def sweep(before: set[str]) -> set[str]:
    """Remove the images made since ``before`` was listed (but :data:`KEPT`), with the layers
    only they used; returns the ids removed."""
    return remove(images() - before - kept())


def remove(made: set[str]) -> set[str]:
    """Remove the images ``made`` (ids), and the dangling ones; returns the ids removed."""
    ordered = sorted(made)
    for start in range(0, len(ordered), 100):
        docker("rmi", "--force", *ordered[start : start + 100], check=False, timeout=600)
    # An image whose tag a rebuild took is dangling, built in this run or an earlier one.
    docker("image", "prune", "--force", check=False, timeout=600)
    return made - images()


def join_runs(state: Path) -> IO[str]:
    """Count this run among those using the engine (until the file returned is closed); waits
    while another run sweeps."""
    run = open(state / RUNS_LOCK, "a+")  # noqa: SIM115 - held open for the whole run
    fcntl.flock(run, fcntl.LOCK_SH)
    return run


def leave_runs(run: IO[str], made: set[str], state: Path) -> set[str] | None:
    """This run is over: every image to remove now, its own ``made`` and those earlier runs
    left, if no other run is under way (the caller removes them, then closes ``run``); else
    ``None``, and ``made`` is written down for the last run."""
    with open(state / UNSWEPT, "a+") as unswept:
        fcntl.flock(unswept, fcntl.LOCK_EX)
        try:
            fcntl.flock(run, fcntl.LOCK_EX | fcntl.LOCK_NB)  # alone?
        except BlockingIOError:
            unswept.writelines(f"{image}\n" for image in sorted(made))
            return None
        unswept.seek(0)
        left = set(unswept.read().split())
        unswept.truncate(0)
    return made | left


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under pytest-xdist, the process that started the workers lists and sweeps, before the
    # first and after the last: a worker that ended first would remove images (and the
    # layers under a build) the other is still using.
    if private_engine() and not hasattr(session.config, "workerinput"):
        # A state folder this user may not write to: sweep at the end as if alone.
        with contextlib.suppress(OSError):
            session.config.stash[_RUN] = join_runs(default_socket().parent)
        session.config.stash[_BEFORE] = images()


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is None:
        return
    run = session.config.stash.get(_RUN, None)
    if run is None:
        sweep(before)
        return
    try:
        everything = leave_runs(run, images() - before - kept(), default_socket().parent)
        if everything is not None:
            remove(everything - kept())
    finally:
        run.close()
