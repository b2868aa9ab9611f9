"""How the tests operate the web UI in a browser (selectors live here, not in the tests)."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Page, expect


def open_ui(page: Page, url: str) -> Page:
    """Load the UI and wait until the tab has its session."""
    page.goto(url)
    expect(page.locator("#session-info")).to_contain_text("Session ", timeout=20_000)
    return page


def session_id(page: Page) -> str:
    match = re.search(r"Session\s+(\w+)", page.inner_text("#session-info"))
    assert match, page.inner_text("#session-info")
    return match.group(1)


def text_input(page: Page, elem_id: str) -> Any:
    return page.locator(f"#{elem_id} textarea, #{elem_id} input").first


def field(page: Page, label: str) -> Any:
    """The form field whose accessible name is ``label`` (as a screen reader announces it)."""
    return page.get_by_label(label, exact=True)


def fill(page: Page, label: str, value: str) -> None:
    field(page, label).fill(value)


def choose(page: Page, elem_id: str, option: str) -> None:
    page.click(f"#{elem_id} input")
    page.get_by_role("option", name=option, exact=True).click()


def fill_json(page: Page, label: str, value: str) -> None:
    """Type into a JSON editor (CodeMirror), found by its label like any other field."""
    field(page, label).fill(value)


def click(page: Page, elem_id: str) -> None:
    page.click(f"#{elem_id}")


def click_until(page: Page, elem_id: str, shown_in: str, text: str) -> None:
    """Click, then wait until ``#shown_in`` shows ``text``: the page's own state after the click.

    Clicks in a row must each wait so: a button's click that comes while its last one is still
    processed is dropped, or reads the page as it was before the last one (on a loaded machine,
    the second of two quick "Forward" clicks left the Replay tab at step 1)."""
    click(page, elem_id)
    expect(page.locator(f"#{shown_in}")).to_contain_text(text)


def replay_move(page: Page, button: str, step: int) -> None:
    """Click the Replay tab's ``back`` or ``forward`` and wait until it shows ``step``."""
    click_until(page, f"replay-{button}", "replay-position", f"Step {step} of ")


def expect_banner(page: Page, *texts: str) -> None:
    banner = page.locator("#banner")
    for text in texts:
        expect(banner).to_contain_text(text)


def reset(page: Page, seed: str = "") -> None:
    if seed:
        fill(page, "Seed", seed)
    click(page, "reset-btn")
    expect_banner(page, "Environment reset.")


def step(page: Page, number: int) -> None:
    click(page, "step-btn")
    expect_banner(page, f"Step {number} done.")


def metric(page: Page, elem_id: str) -> str:
    return str(text_input(page, elem_id).input_value())


def history_rows(page: Page, count: int) -> list[list[str]]:
    """The history table's cells, once it shows ``count`` rows."""
    rows = page.locator("#history [role=row].virtual-row")
    expect(rows).to_have_count(count)
    return [
        [cell.strip() for cell in rows.nth(i).locator("[role=gridcell]").all_inner_texts()]
        for i in range(count)
    ]


def download_history(page: Page) -> list[dict[str, Any]]:
    with page.expect_download() as download:
        click(page, "history-download")
    path = download.value.path()
    return [json.loads(line) for line in path.read_text().splitlines()]


def open_sessions(page: Page, url: str) -> Page:
    """Load the UI and show its Sessions tab."""
    open_ui(page, url)
    page.get_by_role("tab", name="Sessions").click()
    return page


def watch_session(page: Page, display_id: str) -> None:
    """Pick the session ``display_id`` in the Sessions tab's picker (its choice's label starts
    with the id, then says the client and the age)."""
    page.click("#watch-session input")
    page.get_by_role("option", name=re.compile("^" + re.escape(display_id))).click()


def fork_watched(page: Page, step: int, episode: str = "Current episode") -> None:
    """Fork the watched session's ``episode`` at ``step`` into the Playground."""
    page.get_by_role("tab", name="Sessions").click()  # a fork shows the Playground
    if episode != "Current episode":  # the one chosen at first
        page.get_by_label(episode, exact=True).check()
    field(page, "Fork at step").fill(str(step))
    click(page, "watch-fork")
