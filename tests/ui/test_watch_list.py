"""What the Sessions tab lists and shows, in a real browser: the watched steps' table keeps the
newest step in view, the sessions are named by display id, client and age with the page's own
left out, and forks made by replay are marked in the Replay tab's list, after the originals."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import ui_pages as pages
from playwright.sync_api import expect
from ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import GenericEnvClient, create_app
from openenv_hub.server.watch import WATCH_SETTING

pytestmark = pytest.mark.browser

#: Whether the last row of the watched steps is inside the table's scrolled box.
NEWEST_IN_VIEW = """() => {
  const box = document.querySelector('#watched-steps');
  const rows = box ? box.querySelectorAll('tbody tr') : [];
  if (!rows.length) return false;
  const last = rows[rows.length - 1].getBoundingClientRect();
  const shown = box.getBoundingClientRect();
  return last.top >= shown.top - 1 && last.bottom <= shown.bottom + 1;
}"""


@pytest.fixture
def echo(serve: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    return serve(create_app(TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True))


def client_session(served: Any) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = [s.id for s in served.pool.sessions() if s.kind == "ws"]
        if found:
            return found[0]
        time.sleep(0.02)
    raise AssertionError("the client's session did not open")


def test_the_watched_steps_table_keeps_the_newest_step_in_view(echo: Any, new_page: Any) -> None:
    with GenericEnvClient(base_url=echo.base_url).sync() as env:
        env.reset()
        page = pages.open_sessions(new_page(), echo.web_url)
        pages.watch_session(page, client_session(echo))
        expect(page.locator("#watch-status")).to_contain_text("episode 1 · 0 steps")
        for n in range(1, 31):  # rows tall enough that 20 of them overflow the table's box
            env.step({"message": f"{'a long message, wrapped over lines ' * 6}m{n}"})
        expect(page.locator("#watch-status")).to_contain_text("30 steps", timeout=30_000)
        expect(page.locator("#watched-steps tbody tr").last).to_contain_text("m30")
        box = page.locator("#watched-steps")
        assert box.evaluate("(box) => box.scrollHeight > box.clientHeight")  # it overflows
        page.wait_for_function(NEWEST_IN_VIEW, timeout=15_000)


def test_the_sessions_are_named_by_id_client_and_age_and_the_pages_own_is_left_out(
    echo: Any, new_page: Any
) -> None:
    other = pages.open_ui(new_page(), echo.web_url)  # another viewer: a web UI tab
    with GenericEnvClient(base_url=echo.base_url).sync() as env:
        env.reset()
        client = client_session(echo)
        page = pages.open_sessions(new_page(), echo.web_url)
        own, others = pages.session_id(page), pages.session_id(other)
        rows = page.locator("#live-sessions tbody tr")
        expect(rows).to_have_count(2)
        expect(page.locator("#live-sessions")).not_to_contain_text(own)
        expect(rows.filter(has_text=client)).to_contain_text("WebSocket client 127.0.0.1")
        expect(rows.filter(has_text=others)).to_contain_text("web UI tab")
        expect(rows.filter(has_text=client).locator("td").nth(2)).to_have_text(
            re.compile(r"^\d+ s$")
        )
        page.click("#watch-session input")
        options = page.get_by_role("option")
        expect(options).to_have_count(2)
        expect(options.filter(has_text=client)).to_have_attribute(
            "aria-label", f"{client} · WebSocket client 127.0.0.1 · opened under a minute ago"
        )
        expect(options.filter(has_text=own)).to_have_count(0)


def test_replay_forks_are_marked_and_listed_after_the_originals(
    serve: Any, new_page: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(WATCH_SETTING, raising=False)
    monkeypatch.delenv("SPACE_ID", raising=False)
    app = create_app(
        TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True,
        trajectories=tmp_path / "episodes.jsonl",
    )  # fmt: skip
    served = serve(app)
    with GenericEnvClient(base_url=served.base_url).sync() as env:
        for episode in range(2):
            env.reset()
            for n in range(3):
                env.step({"message": f"e{episode}m{n}"})
        env.reset()  # the second episode is written when the next one starts
    page = pages.open_ui(new_page(), served.web_url)
    page.get_by_role("tab", name="Replay").click()
    pages.click(page, "replay-server")
    expect(page.locator("#replay-position")).to_contain_text("Step 0 of 3 · reset(")
    for step in (1, 2):
        pages.replay_move(page, "forward", step)
    pages.click(page, "replay-fork")
    pages.expect_banner(page, "Forked at step 2 by replay")
    pages.reset(page)  # the fork's episode ends: it is written
    page.get_by_role("tab", name="Replay").click()
    pages.click(page, "replay-server")
    page.click("#replay-episode input")
    names = page.get_by_role("option")
    expect(names).to_have_count(3)
    label = "aria-label"  # an option's text also holds the mark of the one selected
    expect(names.nth(0)).to_have_attribute(label, "episode 0 · 3 steps · truncated")
    expect(names.nth(1)).to_have_attribute(label, "episode 1 · 3 steps · truncated")
    expect(names.nth(2)).to_have_attribute(
        label, "episode 3 · fork of episode 0 at step 2 · 2 steps · truncated"
    )
