"""A rubric's reward breakdown in the web UI: the history table, the state pane, the download."""

from __future__ import annotations

import pytest
import ui_pages as pages
from echo_env.server.environment import EchoEnvironment
from playwright.sync_api import expect

from openenv_hub import CallToolAction, CallToolObservation, create_app

pytestmark = pytest.mark.browser


@pytest.fixture
def echo(serve):
    app = create_app(
        EchoEnvironment, CallToolAction, CallToolObservation, env_name="echo_env", web=True
    )
    return serve(app)


def test_history_shows_each_steps_breakdown(echo, new_page):
    page = pages.open_ui(new_page(), echo.web_url)
    pages.reset(page)
    pages.choose(page, "tool-picker", "echo_message")
    pages.fill(page, "message", "Hello, web!")  # 11 of the 32 characters for full marks
    pages.click(page, "call-tool")
    pages.expect_banner(page, "Called tool 'echo_message'.")

    assert pages.metric(page, "reward") == str(0.5 + 0.5 * 11 / 32)
    rows = pages.history_rows(page, 2)
    assert rows[1][2] == "0.672 (tool_succeeded 1, message_length 0.344)"
    expect(page.locator("#observation")).to_contain_text('"reward_breakdown"')
    expect(page.locator("#state")).to_contain_text('"episode_return"')

    records = pages.download_history(page)
    assert records[1]["observation"]["metadata"]["reward_breakdown"] == {
        "tool_succeeded": 1.0,
        "message_length": 11 / 32,
    }
