"""The code blocks of README.md, docs/ and examples/, each claimed by the test that runs (or
checks) it.

A block is claimed by an HTML comment on the line just above its opening fence::

    <!-- NAME: run by tests/PATH.py -->
    ```bash
    ...
    ```

``checked by`` instead of ``run by`` marks output or wire samples that a test compares rather
than runs. ``tests/test_doc_blocks.py`` fails for any block without a claim, and for a claim
whose test file does not mention ``NAME``; the test itself reads the block with
:func:`doc_block`, so what it runs is exactly what the document prints.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<code>.*?)^(?P=indent)```", re.S | re.M
)
CLAIM = re.compile(
    r"<!-- (?P<name>[^:>]+): (?P<how>run|checked) by (?P<test>tests/[\w/.-]+\.py) -->\s*$"
)


@dataclass(frozen=True)
class DocBlock:
    document: str  # relative to the repository, e.g. "docs/runtimes.md"
    line: int  # of the opening fence, 1-based
    language: str
    code: str
    name: str | None  # None: the block is not claimed by any test
    test: str | None

    @property
    def lines(self) -> list[str]:
        return self.code.strip().splitlines()


def documents() -> list[str]:
    """README.md and every Markdown file under docs/ and examples/."""
    docs = sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))
    examples = sorted(str(p.relative_to(REPO)) for p in (REPO / "examples").glob("*.md"))
    return ["README.md", *docs, *examples]


def blocks_of(document: str) -> list[DocBlock]:
    text = (REPO / document).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        claim = CLAIM.search(before)
        found.append(
            DocBlock(
                document=document,
                line=line,
                language=match["lang"],
                code=match["code"],
                name=claim["name"] if claim else None,
                test=claim["test"] if claim else None,
            )
        )
    return found


def doc_block(document: str, name: str) -> DocBlock:
    """The block of ``document`` claimed under ``name``."""
    matching = [b for b in blocks_of(document) if b.name == name]
    assert len(matching) == 1, f"{document} has {len(matching)} blocks named {name!r}"
    return matching[0]
