"""Every guide in docs/ can be found: docs/index.md links each one, and the README's "Learn more"
links each one too."""

from __future__ import annotations

import re

import pytest
from doc_blocks import REPO

DOCS = REPO / "docs"
GUIDES = sorted(path.name for path in DOCS.glob("*.md") if path.name != "index.md")


def _learn_more() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Learn more\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
    assert section, "the README has a Learn more section"
    return section.group(1)


@pytest.mark.parametrize("guide", GUIDES)
def test_docs_index_links_every_guide(guide: str) -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    assert f"]({guide})" in index, f"docs/index.md does not link {guide}"


@pytest.mark.parametrize("guide", GUIDES)
def test_readme_learn_more_links_every_guide(guide: str) -> None:
    assert f"](docs/{guide})" in _learn_more(), f"README's Learn more does not link {guide}"
