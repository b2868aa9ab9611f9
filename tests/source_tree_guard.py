"""Every test leaves the repository's environment and Space folders as it found them.

A push or pull run on ``envs/NAME`` or ``spaces/NAME`` itself (instead of a copy) makes the
folder remember a Space of that test's LocalHub in ``.openenv/space.json``; the next push from
the folder then refuses, as it should, because that Hub is gone, and a test copying the folder
meanwhile copies the link too. These fixtures fail the test (or, for a module's fixtures, the
module) that left such a file, and remove it, so one test cannot break another.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _remembered_spaces() -> set[Path]:
    return {*REPO.glob("envs/*/.openenv/space.json"), *REPO.glob("spaces/*/.openenv/space.json")}


def _guard(nodeid: str) -> Iterator[None]:
    before = _remembered_spaces()
    yield
    left = sorted(_remembered_spaces() - before)
    for path in left:
        path.unlink(missing_ok=True)
    if left:
        names = ", ".join(str(path.relative_to(REPO)) for path in left)
        pytest.fail(f"{nodeid} left {names}: push or pull a copy of the folder")


@pytest.fixture(autouse=True, scope="module")
def _folders_untouched_by_the_module(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _guard(request.node.nodeid)


@pytest.fixture(autouse=True)
def _folders_untouched(request: pytest.FixtureRequest) -> Iterator[None]:
    yield from _guard(request.node.nodeid)
