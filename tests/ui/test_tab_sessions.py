"""Every browser tab has its own pool session, released when the tab closes or goes idle."""

from __future__ import annotations

import pytest
import ui_pages as pages
from playwright.sync_api import expect
from ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import create_app

pytestmark = pytest.mark.browser


def typed_app(**options):
    return create_app(
        TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True, **options
    )


def test_two_browsers_get_separate_sessions(serve, new_page):
    served = serve(typed_app())
    first = pages.open_ui(new_page(), served.web_url)
    second = pages.open_ui(new_page(), served.web_url)
    served.wait_sessions(2)
    ids = {session.id[:8] for session in served.pool.sessions()}
    assert {pages.session_id(first), pages.session_id(second)} == ids

    pages.reset(first)
    pages.reset(second)
    for number, message in enumerate(["one", "two", "three"], start=1):
        pages.fill(first, "message", message)
        pages.step(first, number)
    pages.fill(second, "message", "solo")
    pages.step(second, 1)

    expect(first.locator("#state")).to_contain_text('"step_count": 3')
    pages.click(second, "state-btn")
    pages.expect_banner(second, "State read.")
    expect(second.locator("#state")).to_contain_text('"step_count": 1')
    assert sorted(s.step_count for s in served.pool.sessions()) == [1, 3]
    assert all(s.kind == "ui" for s in served.pool.sessions())


@pytest.mark.slow
def test_twenty_tabs_opened_and_closed_leave_no_session(serve, new_page):
    served = serve(typed_app())
    # Every open tab holds a connection for gradio's heartbeat, and chromium allows 6 per host
    # in one browser context; a tab that loads needs more than one of its own (its page, then
    # the queue's stream), so with 5 open the sixth connection alone left a tab at "Loading..."
    # once: 5 contexts of 4 tabs.
    tabs = []
    for index in range(20):
        tab = new_page() if index % 4 == 0 else tabs[-1].context.new_page()
        tabs.append(pages.open_ui(tab, served.web_url))
    served.wait_sessions(20)
    assert len({pages.session_id(tab) for tab in tabs}) == 20
    for tab in tabs:
        tab.close()
    served.wait_sessions(0, timeout_s=5)


def test_a_session_reaped_for_idleness_is_replaced_on_the_next_action(serve, new_page):
    served = serve(typed_app(session_idle_timeout_s=2))
    page = pages.open_ui(new_page(), served.web_url)
    old = pages.session_id(page)
    served.wait_sessions(0, timeout_s=10)  # the reaper closed the idle session
    # From here on the tab's new session must outlive a busy machine's slow clicks: a second
    # reaping would be right, and would hide the replacement this test looks for.
    served.pool.idle_timeout_s = 600

    pages.click(page, "reset-btn")
    pages.expect_banner(
        page,
        "previous session of this tab was closed (session idle for over 2 s)",
        "Environment reset.",
    )
    assert pages.session_id(page) != old
    assert served.pool.active_sessions == 1
    pages.fill(page, "message", "back")
    pages.step(page, 1)


def test_a_full_pool_is_reported_and_the_tab_recovers(serve, new_page):
    served = serve(typed_app(max_concurrent_envs=1))
    first = pages.open_ui(new_page(), served.web_url)
    second = new_page()
    second.goto(served.web_url)
    pages.expect_banner(second, "The server is at capacity", "1/1 sessions active")
    expect(second.locator("#session-info")).to_contain_text("No session")

    first.close()
    served.wait_sessions(0)
    pages.reset(second)
    assert served.pool.active_sessions == 1
