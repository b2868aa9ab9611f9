"""The echo environment in the UI, with no UI code: tool picker, tool calls, README."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import ui_pages as pages
from echo_env.server.environment import EchoEnvironment
from playwright.sync_api import expect
from ui_envs import CalculatorEnvironment, NoteAction, NoteObservation

from openenv_hub import CallToolAction, CallToolObservation, create_app

pytestmark = pytest.mark.browser

# The README's screenshot: refreshed when OPENENV_UPDATE_SCREENSHOTS=1, else taken into tmp_path.
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "web-ui.png"


@pytest.fixture
def echo(serve):
    # No readme= here: the UI finds README.md next to the environment's openenv.yaml.
    app = create_app(
        EchoEnvironment, CallToolAction, CallToolObservation, env_name="echo_env", web=True
    )
    return serve(app)


def test_tool_form_calls_an_echo_tool(echo, new_page, tmp_path):
    page = pages.open_ui(new_page(viewport={"width": 1280, "height": 900}), echo.web_url)
    expect(page.locator("#step-btn")).to_have_count(0)  # the tool form replaces the action form
    expect(page.locator("#tool-description")).to_contain_text("Echo back the provided message.")

    pages.reset(page)
    pages.choose(page, "tool-picker", "echo_with_length")
    expect(page.locator("#call-tool")).to_have_text("Call echo_with_length")
    pages.fill(page, "message", "Hello, web!")
    pages.click(page, "call-tool")
    pages.expect_banner(page, "Called tool 'echo_with_length'.")

    observation = page.locator("#observation")
    expect(observation).to_contain_text('"length": 11')
    expect(observation).to_contain_text('"tool_name": "echo_with_length"')
    expect(page.locator("#state")).to_contain_text('"step_count": 1')
    rows = pages.history_rows(page, 2)
    assert rows[1][1] == 'echo_with_length({"message": "Hello, web!"})'

    target = (
        SCREENSHOT
        if os.environ.get("OPENENV_UPDATE_SCREENSHOTS") == "1"
        else tmp_path / "web-ui.png"
    )
    page.screenshot(path=str(target), full_page=True)
    assert target.read_bytes().startswith(b"\x89PNG") and target.stat().st_size > 10_000


@pytest.fixture
def calculator(serve):
    return serve(create_app(CalculatorEnvironment, NoteAction, NoteObservation, web=True))


def test_tool_calls_and_own_actions_side_by_side(calculator, new_page):
    page = pages.open_ui(new_page(), calculator.web_url)
    pages.reset(page)
    pages.choose(page, "tool-picker", "scale")
    pages.fill_json(page, "values", "[1, 2.5]")
    pages.click(page, "call-tool")
    pages.expect_banner(page, "Called tool 'scale'.")
    expect(page.locator("#observation")).to_contain_text("5.0")

    pages.fill(page, "note", "remember this")
    pages.step(page, 1)
    expect(page.locator("#observation")).to_contain_text("remember this")
    assert pages.metric(page, "reward") == "1.0"


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("1", "0", ["Tool 'divide' failed (execution_error)", "ZeroDivisionError"]),
        ("one", "2", ["Invalid arguments for tool 'divide'", "a: 'one' is not a number"]),
    ],
)
def test_tool_errors_are_shown(calculator, new_page, a, b, expected):
    page = pages.open_ui(new_page(), calculator.web_url)
    pages.fill(page, "a", a)
    pages.fill(page, "b", b)
    pages.click(page, "call-tool")
    pages.expect_banner(page, *expected)
    expect(page.locator("#tool-status")).to_contain_text(expected[0])
    pages.fill(page, "a", "3")
    pages.fill(page, "b", "2")
    pages.click(page, "call-tool")
    pages.expect_banner(page, "Called tool 'divide'.")
    expect(page.locator("#observation")).to_contain_text("1.5")


def test_readme_tab_shows_the_readme_without_front_matter(echo, new_page):
    page = pages.open_ui(new_page(), echo.web_url)
    page.get_by_role("tab", name="README").click()
    readme = page.locator("#readme")
    expect(readme).to_contain_text("The smallest complete openenv-hub environment")
    expect(readme.locator("table")).to_contain_text("echo_with_length")
    expect(readme).not_to_contain_text("sdk: docker")


def test_root_redirects_to_the_ui(echo, new_page):
    page = new_page()
    page.goto(echo.base_url + "/")
    assert page.url == echo.web_url
    expect(page.locator("#env-header")).to_contain_text("echo_env")
