"""The quality scorecard on a Space: which files a scorecard was made for, and the card that
shows it.

``openenv validate --level quality --save`` writes ``quality.json`` with the digest of the
folder's published files (:func:`folder_digest`; the card and the scorecard left out, since
push writes them). Push reads it; when the digest still matches, the Space card gets the
scorecard in its metadata (``openenv_quality``, what the catalog reads) and a section of its
README: a badge and a table, between two comment lines that a later push replaces. A scorecard
made for other files is left out, and push says so.

Example:
    >>> from openenv_hub.checks.scorecard import QualityCheck, Scorecard
    >>> card = Scorecard("my_env", "0.1.0", (QualityCheck("floor", "pass", "held"),))
    >>> "| floor | ✅ pass | held |" in scorecard_section(card)
    True
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from openenv_hub.checks.scorecard import CARD_KEY, SCORECARD_FILE, Scorecard
from openenv_hub.hub._ignore import select_files

__all__ = [
    "QUALITY_END",
    "QUALITY_START",
    "add_scorecard",
    "folder_digest",
    "read_scorecard",
    "scorecard_section",
]

QUALITY_START = "<!-- openenv-quality: written by openenv push from quality.json -->"
QUALITY_END = "<!-- /openenv-quality -->"
#: Files the digest leaves out: the card (push rewrites it) and the scorecard itself.
UNHASHED = ("README.md", SCORECARD_FILE)
_MARKS = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "skip": "— not checked",
    "error": "⚠️ could not check",
}
_SECTION = re.compile(re.escape(QUALITY_START) + r".*?" + re.escape(QUALITY_END), re.S)


def folder_digest(root: Path, *, exclude: Sequence[str] = ()) -> str:
    """``sha256:…`` of the folder's published files (names and contents), less the card, the
    scorecard and ``.openenv/``."""
    digest = hashlib.sha256()
    for rel in select_files(root, exclude=exclude).files:
        if rel in UNHASHED or rel.startswith(".openenv/"):
            continue
        digest.update(rel.encode("utf-8") + b"\0")
        digest.update(hashlib.sha256((root / rel).read_bytes()).digest())
    return "sha256:" + digest.hexdigest()


def read_scorecard(root: Path) -> Scorecard | None:
    """The folder's ``quality.json``, or None when it has none.

    Raises:
        ValueError: The file is not a scorecard.
    """
    path = root / SCORECARD_FILE
    if not path.is_file():
        return None
    try:
        return Scorecard.from_json(json.loads(path.read_text(encoding="utf-8")))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{SCORECARD_FILE} is not JSON: {exc}") from None


def add_scorecard(text: str, card: Scorecard) -> str:
    """The Space card ``text`` with ``card`` in its metadata and its README section."""
    from huggingface_hub import SpaceCard

    space_card = SpaceCard(text)
    space_card.data[CARD_KEY] = card.card_metadata()
    section = scorecard_section(card)
    body = space_card.text
    if _SECTION.search(body):
        body = _SECTION.sub(lambda _: section, body, count=1)
    else:
        body = body.rstrip("\n") + "\n\n" + section + "\n"
    space_card.text = body
    return str(space_card)


def scorecard_section(card: Scorecard) -> str:
    """The README's section: a heading, a badge, and a row per check."""
    rows = "\n".join(
        f"| {check.name} | {_MARKS[check.status]} | {_cell(check.summary)} |"
        for check in card.checks
    )
    when = f" on {card.checked_at[:10]}" if card.checked_at else ""
    return (
        f"{QUALITY_START}\n## Quality\n\n![quality: {card.badge()}]({badge_url(card)})\n\n"
        "| check | result | what was found |\n|---|---|---|\n"
        f"{rows}\n\nChecked by `openenv validate --level quality`{when} (version "
        f"{card.version}); the evidence is in [{SCORECARD_FILE}]({SCORECARD_FILE}) and "
        f"docs/quality.md says what each check means.\n{QUALITY_END}"
    )


def badge_url(card: Scorecard) -> str:
    """A shields.io badge: red with a failure, yellow when a check could not run, else green."""
    counts = card.counts()
    color = "red" if counts["fail"] else "yellow" if counts["error"] else "brightgreen"
    label = card.badge().replace("-", "--").replace("_", "__")
    return f"https://img.shields.io/badge/quality-{quote(label, safe='')}-{color}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:200]
