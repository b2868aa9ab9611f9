"""Every code block in README.md and docs/ is claimed by a test that runs or checks it."""

from __future__ import annotations

from collections import Counter

import pytest
from doc_blocks import REPO, blocks_of, documents


@pytest.mark.parametrize("document", documents())
def test_every_block_is_claimed_by_a_test_that_names_it(document: str) -> None:
    problems = []
    for block in blocks_of(document):
        where = f"{document}:{block.line}"
        if block.name is None or block.test is None:
            problems.append(f"{where}: no '<!-- NAME: run by tests/....py -->' line above it")
        elif not (REPO / block.test).is_file():
            problems.append(f"{where}: {block.test} does not exist")
        elif repr(block.name) not in (REPO / block.test).read_text(encoding="utf-8").replace(
            '"', "'"
        ):
            problems.append(f"{where}: {block.test} never mentions {block.name!r}")
    assert problems == []


@pytest.mark.parametrize("document", documents())
def test_block_names_are_unique_within_a_document(document: str) -> None:
    names = Counter(b.name for b in blocks_of(document) if b.name)
    assert [name for name, count in names.items() if count > 1] == []
