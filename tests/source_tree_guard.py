"""Every test leaves the repository's environment folders as it found them.

A push or pull run on ``envs/NAME`` itself (instead of a copy) makes the folder remember a Space
of that test's LocalHub in ``.openenv/space.json``; the next push from the folder then refuses,
as it should, because that Hub is gone. This fixture fails the test that left such a file, and
removes it, so one test cannot break another that runs later.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

ENVS = Path(__file__).resolve().parents[1] / "envs"


def _remembered_spaces() -> set[Path]:
    return set(ENVS.glob("*/.openenv/space.json"))


@pytest.fixture(autouse=True)
def _environment_folders_untouched(request: pytest.FixtureRequest) -> Iterator[None]:
    before = _remembered_spaces()
    yield
    left = sorted(_remembered_spaces() - before)
    for path in left:
        path.unlink(missing_ok=True)
    if left:
        names = ", ".join(str(path.relative_to(ENVS.parent)) for path in left)
        pytest.fail(f"{request.node.nodeid} left {names}: push or pull a copy of the folder")
