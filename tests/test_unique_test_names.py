"""Test modules need names unique across the tree: pytest imports them by basename."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_test_module_name_is_unique() -> None:
    names = Counter(
        path.name
        for root in ("tests", "envs", "spaces", "examples")
        for path in (REPO / root).rglob("test_*.py")
        if ".venv" not in path.parts
    )
    assert [name for name, count in names.items() if count > 1] == []
