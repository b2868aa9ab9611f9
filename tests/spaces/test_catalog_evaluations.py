"""An environment's page in the catalog shows the evaluation results pushed for it (the
datasets ``openenv eval --space NS/NAME --push-to-hub`` tags with the Space) as a leaderboard,
in chromium, against LocalHub; the figures a card lacks or gets wrong show as unknown, markup
in a card stays text, and an open page asks the Hub for them once, however often it redraws."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from catalog_support import plain_space
from eval_support import word_game, workdir
from playwright.sync_api import Page, expect
from serving import ServerThread

from openenv_catalog import Catalog, CatalogSettings
from openenv_hub.localhub import LocalHub

__all__ = ["word_game", "workdir"]  # fixtures

pytestmark = [
    pytest.mark.browser,
    pytest.mark.filterwarnings("ignore:'future.no_silent_downcasting' is deprecated"),
    pytest.mark.filterwarnings("ignore:The copy keyword is deprecated"),
]

TAG = f"catalog-eval-{uuid.uuid4().hex[:8]}"
#: A page's first load asks the Hub for the Space: as long as the catalog's other pages get.
FIRST_LOAD_MS = 30_000
ARGS = ("--policy", "guesser:guess", "--tasks", "tasks", "-k", 4, "-c", 4)


def odd_card(space: str) -> bytes:
    """A results card with a model name holding markup, a return that is no number, no date."""
    front = {
        "tags": ["openenv", f"openenv-env:{space}"],
        "openenv_eval": {"model": "<b>bold</b>", "mean_return": "high", "pass_at_1": 0.5},
    }
    return f"---\n{json.dumps(front)}\n---\n# Results\n".encode()


@pytest.fixture
def catalog_url(serve: Callable[..., ServerThread], local_hub: LocalHub) -> Iterator[str]:
    from openenv_catalog.app import create_app

    settings = CatalogSettings(endpoint=local_hub.endpoint, tags=(TAG,), poll_s=0.5)
    yield serve(create_app(Catalog(settings))).url


def off_the_loop(cli: Any, *args: object) -> Any:
    """``cli(*args)`` in a thread of its own: Playwright's sync API marks an event loop running
    in this one, where ``openenv eval`` could not start its own."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(cli, *args).result(timeout=120)


def dataset_listings(local_hub: LocalHub, tag: str) -> int:
    """How many times LocalHub listed the datasets tagged ``tag``."""
    return sum(
        1
        for r in local_hub.requests()
        if r["path"] == "/api/datasets" and tag in parse_qs(r["query"]).get("filter", [])
    )


def test_an_environment_page_shows_its_pushed_evaluations(
    cli: Any,
    word_game: Any,
    workdir: Path,
    hub_env: Any,
    local_hub: LocalHub,
    catalog_url: str,
    new_page: Callable[..., Page],
) -> None:
    space = plain_space(hub_env.api(), hub_env.repo_id("word-game"), [TAG])
    pushed = []
    for number in range(2):
        repo = hub_env.repo_id("word-eval")
        args = ("eval", word_game.url, *ARGS, "--seed", number, "-o", f"results-{number}")
        result = off_the_loop(cli, *args, "--space", space, "--push-to-hub", repo)
        assert result.code == 0, result.text
        summary = json.loads((workdir / f"results-{number}" / "summary.json").read_text())
        pushed.append((repo, summary))
    easy = hub_env.repo_id("easy-eval")  # complete, but every rollout "passes" at threshold 0
    args = ("eval", word_game.url, *ARGS, "--pass-threshold", 0, "--max-turns", 1, "-o", "easy")
    assert off_the_loop(cli, *args, "--space", space, "--push-to-hub", easy).code == 0
    odd = hub_env.repo_id("odd-eval")
    hub_env.api().create_repo(odd, repo_type="dataset")
    hub_env.api().upload_file(
        path_or_fileobj=odd_card(space), path_in_repo="README.md", repo_id=odd, repo_type="dataset"
    )
    other = hub_env.repo_id("other-eval")
    assert (
        off_the_loop(
            cli,
            "eval",
            word_game.url,
            *ARGS,
            "-o",
            "r3",
            "--space",
            "alice/other",
            "--push-to-hub",
            other,
        ).code
        == 0
    )

    before = dataset_listings(local_hub, f"openenv-env:{space}")
    page = new_page()
    page.goto(f"{catalog_url}/?space={space}")
    board = page.locator('#detail table[aria-label="Evaluations"]')
    expect(board.locator("tr[data-results]")).to_have_count(2, timeout=FIRST_LOAD_MS)
    shown = [str(r.get_attribute("data-results")) for r in board.locator("tr[data-results]").all()]
    assert other not in shown and sorted(shown) == sorted(r for r, _ in pushed)
    # a card that does not say the run is complete is folded away, not ranked
    folded = page.locator("#detail details.oc-incomplete")
    expect(folded.locator("summary")).to_contain_text("1 incomplete run")
    expect(folded.locator('table[aria-label="Incomplete evaluations"] tr')).to_have_count(2)
    folded.locator("summary").click()
    odd_row = folded.locator(f'tr[data-results="{odd}"]')
    shown_pass_at_1 = [
        float(t) for t in board.locator("tr[data-results] td:nth-child(3)").all_inner_texts()
    ]
    assert shown_pass_at_1 == sorted(shown_pass_at_1, reverse=True)  # best pass@1 first
    for repo, summary in pushed:
        cells = board.locator(f'tr[data-results="{repo}"] td').all_inner_texts()
        assert cells[0] == "guesser:guess"
        assert cells[1] == f"{summary['return']['mean']:.3f}"
        assert cells[2] == f"{summary['pass_at_k']['1']:.3f}"
        assert cells[3] == "12" and len(cells[4]) == 10 and cells[5] == repo
        link = board.locator(f'tr[data-results="{repo}"] a')
        assert link.get_attribute("href") == f"{local_hub.endpoint}/datasets/{repo}"
    # a complete run under other conditions is shown apart, never ranked with the others
    other_conditions = page.locator("#detail details.oc-other-conditions")
    expect(other_conditions.locator("summary")).to_contain_text("1 run under other conditions")
    other_conditions.locator("summary").click()
    easy_row = other_conditions.locator(f'tr[data-results="{easy}"]')
    assert easy_row.locator("td").all_inner_texts()[2] == "1.000"
    odd_cells = odd_row.locator("td").all_inner_texts()
    assert odd_cells[:4] == ["<b>bold</b>", "—", "0.500", "—"]  # markup shown as text
    assert page.locator("#detail b").count() == 0

    page.wait_for_timeout(2_500)  # five ticks of the page's timer
    expect(board.locator("tr[data-results]")).to_have_count(2)
    assert dataset_listings(local_hub, f"openenv-env:{space}") - before == 1

    detail = httpx.get(f"{catalog_url}/api/environments/{space}", timeout=30).json()
    listed = {e["dataset"]: (e["complete"], e["ranked"]) for e in detail["evaluations"]}
    assert listed == {
        **dict.fromkeys(shown, (True, True)),
        easy: (True, False),
        odd: (False, False),
    }
    assert dataset_listings(local_hub, f"openenv-env:{space}") - before == 1  # from the cache


def test_an_environment_without_evaluations_says_how_to_push_them(
    hub_env: Any, catalog_url: str, new_page: Callable[..., Page]
) -> None:
    space = plain_space(hub_env.api(), hub_env.repo_id("lonely"), [TAG])
    page = new_page()
    page.goto(f"{catalog_url}/?space={space}")
    expect(page.locator("#detail")).to_contain_text(
        "No evaluation results yet", timeout=FIRST_LOAD_MS
    )
    expect(page.locator("#detail")).to_contain_text("openenv eval --space NS/NAME --push-to-hub")
