"""The quality scorecard as the catalog shows it: a column per check, each sortable (its header
is a link that orders the catalog by it, best first), and the evidence in a Space's details,
one click from its cell.

The scorecard comes from the Space card's metadata (``openenv_quality``, which ``openenv push``
writes from ``quality.json``): no request besides the listing's. A card whose scorecard does not
read shows none. Pure functions of the data; every value escaped, every link ``http(s)`` or a
query of this page.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from openenv_hub.checks.scorecard import CARD_KEY, CHECK_NAMES, SCORECARD_FILE, Scorecard

from .models import CHECK_TITLES, QUALITY_SORTS, CatalogQuery, Environment, web_link

__all__ = [
    "MAX_SORTED",
    "header_cells",
    "quality_html",
    "row_cells",
    "scorecard_of",
    "sort_key",
]

#: The most Spaces a quality order sorts (the Hub cannot sort by a card's metadata: the catalog
#: lists them, most liked first, and sorts them itself).
MAX_SORTED = 500
_MARKS = {"pass": "✓", "fail": "✗", "skip": "—", "error": "?"}
_WORDS = {"pass": "passed", "fail": "failed", "skip": "not checked", "error": "could not check"}
_RANK = {"pass": 0, "skip": 1, "error": 2, "fail": 3}


def scorecard_of(card: Any) -> Scorecard | None:
    """The scorecard in a Space card's metadata, or None (none, or one that does not read)."""
    getter = getattr(card, "get", None)
    data = getter(CARD_KEY) if callable(getter) else None
    if data is None:
        return None
    try:
        return Scorecard.from_json(data)
    except (ValueError, TypeError):
        return None


def sort_key(sort: str) -> Callable[[Environment], tuple[float, ...]]:
    """How ``sort`` (a key of :data:`QUALITY_SORTS`) orders environments: best first, those
    without a scorecard last."""
    check = sort.partition(":")[2]

    def key(env: Environment) -> tuple[float, ...]:
        card = env.quality
        if card is None:
            return (math.inf,)
        if not check:
            counts = card.counts()
            return (counts["fail"], counts["error"], -counts["pass"])
        found = card.check(check)
        if found is None:
            return (math.inf,)
        if check == "cost":
            return (_RANK[found.status], _number(found.measured.get("reset_p50_ms")))
        return (_RANK[found.status],)

    return key


def header_cells(query: CatalogQuery) -> str:
    """The quality columns' headers: each a link ordering the catalog by it (the search and the
    tag kept)."""
    cells = [_header("quality", "Quality", query)]
    cells += [_header(f"quality:{name}", title, query) for name, title in CHECK_TITLES.items()]
    return "".join(cells)


def _header(key: str, title: str, query: CatalogQuery) -> str:
    current = ' aria-sort="ascending"' if key == query.sort else ""
    kept = "".join(
        f"&{name}={quote(value, safe='')}"
        for name, value in (("search", query.search), ("tag", query.tag))
        if value
    )
    link = (
        f'<a class="oc-sort" href="?sort={quote(key)}{_e(kept)}" '
        f'title="{_e(QUALITY_SORTS[key])}, best first">{_e(title)}</a>'
    )
    return f'<th scope="col" data-sort="{_e(key)}"{current}>{link}</th>'


def row_cells(env: Environment) -> str:
    """A row's quality cells: the scorecard's badge, then a mark per check linking to the
    evidence."""
    card, details = env.quality, f"?space={quote(env.repo_id, safe='')}#quality"
    if card is None:
        return '<td class="oc-q-none" title="No scorecard">—</td>' + (
            '<td class="oc-q-none">—</td>' * len(CHECK_NAMES)
        )
    cells = [f'<td class="oc-q-badge"><a href="{details}">{_e(card.badge())}</a></td>']
    for name in CHECK_NAMES:
        check = card.check(name)
        if check is None:
            cells.append('<td class="oc-q-none">—</td>')
            continue
        text = _MARKS[check.status]
        if name == "cost" and "reset_p50_ms" in check.measured:
            text += f" {_number(check.measured['reset_p50_ms']):g} ms"
        cells.append(
            f'<td class="oc-q oc-q-{check.status}" data-check="{name}" '
            f'data-status="{check.status}"><a href="{details}" '
            f'title="{_e(_WORDS[check.status])}: {_e(check.summary)}">{_e(text)}</a></td>'
        )
    return "".join(cells)


def quality_html(env: Environment) -> str:
    """A Space's scorecard in its details: each check, what it found, and its evidence."""
    card = env.quality
    title = '<h4 id="quality">Quality</h4>'
    if card is None:
        text = (
            "No quality scorecard: openenv validate --level quality --save writes one, and "
            "openenv push puts it on the Space card."
        )
        return f'{title}<p class="oc-empty">{_e(text)}</p>'
    source = web_link(f"{env.page_url.rstrip('/')}/blob/main/{SCORECARD_FILE}")
    when = f"checked {card.checked_at[:10]}" if card.checked_at else ""
    meta = f"{_e(card.badge())} · version {_e(card.version)} · {_e(when)}"
    if source:
        meta += f' · <a href="{_e(source)}" target="_blank" rel="noopener">{SCORECARD_FILE}</a>'
    rows = "".join(_check_row(card, name) for name in CHECK_NAMES if card.check(name))
    return (
        f'{title}<p class="oc-meta">{meta}</p><table class="oc-report" aria-label="Quality">'
        '<thead><tr><th scope="col">Check</th><th scope="col">Result</th>'
        f'<th scope="col">Evidence</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _check_row(card: Scorecard, name: str) -> str:
    check = card.check(name)
    assert check is not None
    evidence = "".join(f"<li>{_e(line)}</li>" for line in check.evidence)
    hint = f"<br><em>{_e(check.hint)}</em>" if check.hint and check.status != "pass" else ""
    return (
        f'<tr data-quality="{_e(name)}"><td>{_e(CHECK_TITLES.get(name, name))}</td>'
        f"<td>{_e(_WORDS[check.status])}</td><td>{_e(check.summary)}{hint}"
        f"<ul>{evidence}</ul></td></tr>"
    )


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.inf
    return float(value) if math.isfinite(value) else math.inf


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
