"""The catalog shows the quality scorecards of the environments pushed with one: a column per
check, each sortable by a click on its header, and the evidence one click from a cell; in
chromium, against LocalHub, with Spaces pushed by ``openenv push``.

One environment's scorecard is made here by ``openenv validate --level quality --save`` (the
echo environment); a second is that one with a failing floor and a slower reset; a third
environment has none."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from catalog_support import echo_copy, plain_space
from playwright.sync_api import Page, expect
from serving import ServerThread

from openenv_catalog import Catalog, CatalogSettings
from openenv_hub.checks.scorecard import SCORECARD_FILE, QualityCheck, Scorecard
from openenv_hub.hub import folder_digest
from openenv_hub.localhub import LocalHub

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

TAG = f"catalog-quality-{uuid.uuid4().hex[:8]}"
FIRST_LOAD_MS = 30_000


@dataclass(frozen=True)
class Pushed:
    hub: str
    catalog: str
    sound: str  # the echo environment, as validated here: every check passes
    gamed: str  # the same with a failing floor and a slower reset
    bare: str  # no scorecard


def off_the_loop(call: Callable[..., Any], *args: object) -> Any:
    """``call(*args)`` in a thread of its own (Playwright marks this thread's loop running)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(call, *args).result(timeout=600)


def gamed_copy(sound: Path, target: Path) -> Path:
    """``sound``'s folder again, its scorecard saying the floor failed and a reset is slow."""
    folder = echo_copy(target, extra_tags=[TAG])
    card = Scorecard.from_json(json.loads((sound / SCORECARD_FILE).read_text()))
    floor = QualityCheck(
        "floor",
        "fail",
        "1 of 2 non-solutions came within the margin of the oracle",
        ("empty answer: 1 on seed-0 > 0.5 (a planted defect)",),
        hint="A non-solution earns (almost) what a solution earns: the reward can be gamed.",
    )
    cost = QualityCheck("cost", "pass", "reset_p50_ms 50", measured={"reset_p50_ms": 50.0})
    checks = tuple({"floor": floor, "cost": cost}.get(check.name, check) for check in card.checks)
    card = replace(card, checks=checks, digest=folder_digest(folder))
    (folder / SCORECARD_FILE).write_text(json.dumps(card.to_json()), encoding="utf-8")
    return folder


@pytest.fixture
def pushed(
    cli: Callable[..., Any],
    hub_env: Any,
    local_hub: LocalHub,
    serve: Callable[..., ServerThread],
    tmp_path: Path,
) -> Iterator[Pushed]:
    sound = echo_copy(tmp_path / "sound" / "echo_env", extra_tags=[TAG])
    saved = off_the_loop(cli, "validate", sound, "--level", "quality", "--save")
    assert saved.code == 0, saved.text
    gamed = gamed_copy(sound, tmp_path / "gamed" / "echo_env")
    ids = Pushed(
        local_hub.endpoint,
        "",
        hub_env.repo_id("sound"),
        hub_env.repo_id("gamed"),
        hub_env.repo_id("bare"),
    )
    for folder, repo_id in ((sound, ids.sound), (gamed, ids.gamed)):
        result = off_the_loop(cli, "push", folder, "--repo-id", repo_id)
        assert result.code == 0, result.text
        assert "Quality scorecard: " in result.out and "left out" not in result.out
    plain_space(hub_env.api(), ids.bare, ["openenv", TAG])
    for repo_id, likes in ((ids.bare, 3), (ids.gamed, 2), (ids.sound, 1)):
        local_hub.set_likes(repo_id, likes)
    from openenv_catalog.app import create_app

    settings = CatalogSettings(endpoint=local_hub.endpoint, tags=(TAG,), poll_s=0.5)
    yield replace(ids, catalog=serve(create_app(Catalog(settings))).url)


def order(page: Page) -> list[str]:
    return [
        str(r.get_attribute("data-space")) for r in page.locator("#catalog tr[data-space]").all()
    ]


def cell(page: Page, repo_id: str, check: str) -> Any:
    return page.locator(f'#catalog tr[data-space="{repo_id}"] td[data-check="{check}"]')


def test_the_catalog_shows_sorts_and_explains_the_scorecards_also_as_json(
    pushed: Pushed, new_page: Callable[..., Page]
) -> None:
    page = new_page()
    page.goto(pushed.catalog)
    rows = page.locator("#catalog tr[data-space]")
    expect(rows).to_have_count(3, timeout=FIRST_LOAD_MS)
    assert order(page) == [pushed.bare, pushed.gamed, pushed.sound]  # most liked first
    headers = page.locator("#catalog thead th").all_inner_texts()
    assert headers[5:] == [
        "Quality", "Solvable", "Floor", "No leakage", "Determinism", "Seeds", "Isolation", "Cost",
    ]  # fmt: skip
    expect(cell(page, pushed.sound, "floor")).to_have_attribute("data-status", "pass")
    expect(cell(page, pushed.gamed, "floor")).to_have_attribute("data-status", "fail")
    expect(cell(page, pushed.gamed, "floor")).to_have_text("✗")
    expect(cell(page, pushed.gamed, "cost")).to_have_text("✓ 50 ms")
    sound_row = page.locator(f'#catalog tr[data-space="{pushed.sound}"]')
    expect(sound_row.locator(".oc-q-badge")).to_have_text("7/7 passed")
    bare_row = page.locator(f'#catalog tr[data-space="{pushed.bare}"]')
    expect(bare_row.locator(".oc-q-none")).to_have_count(8)

    page.locator('#catalog th[data-sort="quality:floor"] a').click()
    expect(page.locator('#catalog th[aria-sort="ascending"]')).to_have_text("Floor")
    expect(rows.first).to_have_attribute("data-space", pushed.sound, timeout=FIRST_LOAD_MS)
    assert order(page) == [pushed.sound, pushed.gamed, pushed.bare]  # pass, fail, none
    page.locator('#catalog th[data-sort="quality:cost"] a').click()
    expect(page.locator('#catalog th[aria-sort="ascending"]')).to_have_text("Cost")
    assert order(page) == [pushed.sound, pushed.gamed, pushed.bare]  # faster reset first

    cell(page, pushed.gamed, "floor").locator("a").click()
    quality = page.locator('#detail table[aria-label="Quality"]')
    expect(quality).to_be_visible(timeout=FIRST_LOAD_MS)
    floor = quality.locator('tr[data-quality="floor"]')
    expect(floor).to_contain_text("failed")
    expect(floor).to_contain_text("empty answer: 1 on seed-0 > 0.5 (a planted defect)")
    expect(floor).to_contain_text("the reward can be gamed")
    link = page.locator("#detail a", has_text=SCORECARD_FILE)
    source = f"{pushed.hub}/spaces/{pushed.gamed}/blob/main/{SCORECARD_FILE}"
    expect(link).to_have_attribute("href", source)

    # The same data as JSON: a scorecard per row, and one whole in a Space's details.
    found = httpx.get(f"{pushed.catalog}/api/environments?sort=quality", timeout=30).json()
    rows = {row["id"]: row["quality"] for row in found["environments"]}
    assert list(rows) == [pushed.sound, pushed.gamed, pushed.bare]
    assert rows[pushed.bare] is None
    assert rows[pushed.gamed]["checks"]["floor"] == "fail"
    assert rows[pushed.sound]["badge"] == "7/7 passed"
    detail = httpx.get(f"{pushed.catalog}/api/environments/{pushed.gamed}", timeout=30).json()
    floor = next(c for c in detail["scorecard"]["checks"] if c["name"] == "floor")
    assert floor["evidence"] == ["empty answer: 1 on seed-0 > 0.5 (a planted defect)"]
