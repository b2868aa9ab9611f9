"""Removes, when a test run ends, the images it built on the private Docker engine.

Every run builds images under new tags (LocalHub tags each Space image with its commit,
``openenv build`` and the runtime tests tag their own); kept, they filled the engine's disk by
some 50 GB over a few dozen runs. Only the engine of ``.ci/docker/setup.sh`` is swept (an engine
of the user's own, named by ``DOCKER_HOST``, is left alone), and only images that were not there
when the run began, and dangling ones; the base image and the wheelhouses, kept between runs on
purpose, stay.
"""

from __future__ import annotations

import pytest

from docker_support.engine import BASE_IMAGE, default_socket, docker, docker_host

KEPT = (BASE_IMAGE, "localhub-wheelhouse")  # an image's name, or a repository's
_BEFORE = pytest.StashKey[set[str]]()


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
    made = images() - before - kept()
    ordered = sorted(made)
    for start in range(0, len(ordered), 100):
        docker("rmi", "--force", *ordered[start : start + 100], check=False, timeout=600)
    # An image whose tag a rebuild took is dangling, built in this run or an earlier one.
    docker("image", "prune", "--force", check=False, timeout=600)
    return made - images()


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under pytest-xdist, the process that started the workers lists and sweeps, before the
    # first and after the last: a worker that ended first would remove images (and the
    # layers under a build) the other is still using.
    if private_engine() and not hasattr(session.config, "workerinput"):
        session.config.stash[_BEFORE] = images()


def pytest_sessionfinish(session: pytest.Session) -> None:
    before = session.config.stash.get(_BEFORE, None)
    if before is not None:
        sweep(before)
