"""The catalog's quality cells and orders, from Space cards that cannot be trusted: markup stays
text, a scorecard that does not read is none, and every order puts Spaces without one last."""

from __future__ import annotations

import html
from typing import Any

import pytest

from openenv_catalog.models import CatalogQuery, Environment
from openenv_catalog.quality import quality_html, row_cells, scorecard_of, sort_key
from openenv_hub.checks.scorecard import CARD_KEY, QualityCheck, Scorecard


def env(repo_id: str, card: Any) -> Environment:
    return Environment(
        repo_id=repo_id, title=repo_id, stage="RUNNING", error_message="", likes=0, tags=(),
        last_modified=None, sha=None, page_url=f"https://hub.example/spaces/{repo_id}",
        quality=scorecard_of({CARD_KEY: card}),
    )  # fmt: skip


def card(**statuses: str) -> dict[str, Any]:
    checks = tuple(
        QualityCheck(name, status, f"{name} {status}") for name, status in statuses.items()
    )
    return Scorecard("x", "1", checks).card_metadata()


@pytest.mark.parametrize(
    "broken", [None, "text", {"checks": "no"}, {"checks": [{"status": "maybe"}]}, {"checks": [1]}]
)
def test_a_scorecard_that_does_not_read_is_none(broken: Any) -> None:
    assert env("alice/x", broken).quality is None


def test_markup_in_a_scorecard_stays_text() -> None:
    evil = card(floor="fail")
    evil["checks"][0]["summary"] = '<img src=x onerror="alert(1)">'
    evil["checks"][0]["evidence"] = ["<script>alert(2)</script>"]
    shown = env("alice/evil", evil)
    cells, detail = row_cells(shown), quality_html(shown)
    assert "<img" not in cells + detail and "<script>" not in detail
    assert '<img src=x onerror="alert(1)">' in html.unescape(cells)
    assert "<script>alert(2)</script>" in html.unescape(detail)


def test_orders_put_the_best_first_and_spaces_without_a_scorecard_last() -> None:
    envs = [
        env("alice/none", None),
        env("alice/failing", card(solvable="pass", floor="fail")),
        env("alice/unchecked", card(solvable="pass", floor="skip")),
        env("alice/sound", card(solvable="pass", floor="pass")),
    ]
    by_floor = sorted(envs, key=sort_key("quality:floor"))
    assert [e.repo_id for e in by_floor] == [
        "alice/sound", "alice/unchecked", "alice/failing", "alice/none",
    ]  # fmt: skip
    overall = [e.repo_id for e in sorted(envs, key=sort_key("quality"))]
    assert (overall[0], overall[-1]) == ("alice/sound", "alice/none")


def test_a_quality_order_is_a_query_the_catalog_accepts() -> None:
    assert CatalogQuery(sort="quality:floor").sort == "quality:floor"
    with pytest.raises(Exception, match="Unknown sort 'quality:taste'"):
        CatalogQuery(sort="quality:taste")
