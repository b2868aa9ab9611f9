"""The pictures of the game and market environments in a real browser: the Atari frame, the
chess board and the trading chart render (present, not blank) and change after a step."""

from __future__ import annotations

import io
from typing import Any

import pytest
import ui_pages as pages
from PIL import Image, ImageStat
from playwright.sync_api import Page, expect

from openenv_hub import create_app


def atari_app() -> Any:
    from atari_env import AtariAction, AtariObservation, AtariState
    from atari_env.server.app import build_ui
    from atari_env.server.environment import AtariEnvironment

    return create_app(
        AtariEnvironment, AtariAction, AtariObservation, state_cls=AtariState,
        env_name="atari_env", web=True, ui_builder=build_ui,
    )  # fmt: skip


def chess_app() -> Any:
    from chess_env import ChessAction, ChessObservation, ChessState
    from chess_env.server.app import build_ui
    from chess_env.server.environment import ChessEnvironment

    return create_app(
        ChessEnvironment, ChessAction, ChessObservation, state_cls=ChessState,
        env_name="chess_env", web=True, ui_builder=build_ui,
    )  # fmt: skip


def finance_app() -> Any:
    from finance_env import TradingAction, TradingObservation, TradingState
    from finance_env.server.app import build_ui
    from finance_env.server.environment import TradingEnvironment

    return create_app(
        TradingEnvironment, TradingAction, TradingObservation, state_cls=TradingState,
        env_name="finance_env", web=True, ui_builder=build_ui,
    )  # fmt: skip


def picture(page: Page, elem_id: str) -> tuple[str, Image.Image]:
    """The ``<img>``'s source and what the browser drew, once it has loaded."""
    image = page.locator(f"#{elem_id}")
    expect(image).to_be_visible()
    page.wait_for_function(
        "id => { const i = document.getElementById(id); return i && i.complete && i.naturalWidth > 0 }",
        arg=elem_id,
    )
    assert image.get_attribute("alt")
    drawn = Image.open(io.BytesIO(image.screenshot())).convert("RGB")
    return str(image.get_attribute("src")), drawn


def assert_not_blank(drawn: Image.Image) -> None:
    spread = ImageStat.Stat(drawn.convert("L")).stddev[0]
    colours = drawn.getcolors(maxcolors=1_000_000) or []
    assert spread > 10 and len(colours) >= 3, (spread, len(colours))


def changes_after(page: Page, elem_id: str, before: str, act: Any) -> Image.Image:
    act()
    expect(page.locator(f"#{elem_id}")).not_to_have_attribute("src", before)
    _, drawn = picture(page, elem_id)
    assert_not_blank(drawn)
    return drawn


@pytest.mark.browser
def test_the_atari_frame(serve: Any, new_page: Any) -> None:
    page = pages.open_ui(new_page(), serve(atari_app()).web_url)
    page.get_by_role("tab", name="Game").click()
    page.get_by_label("Game seed").fill("3")
    page.click("#atari-new")
    src, drawn = picture(page, "atari-frame-img")
    assert_not_blank(drawn)
    expect(page.locator("#atari-status")).to_contain_text("lives 5")
    page.get_by_label("2 RIGHT").check()  # the paddle moves
    page.get_by_role("spinbutton", name="Steps per click").fill("20")
    changes_after(page, "atari-frame-img", src, lambda: page.click("#atari-step"))
    expect(page.locator("#atari-status")).to_contain_text("frame 80")


@pytest.mark.browser
def test_the_chess_board(serve: Any, new_page: Any) -> None:
    page = pages.open_ui(new_page(), serve(chess_app()).web_url)
    page.get_by_role("tab", name="Board").click()
    page.click("#chess-new")
    src, drawn = picture(page, "chess-board-img")
    assert_not_blank(drawn)
    page.get_by_label("Your move").fill("e4")
    changes_after(page, "chess-board-img", src, lambda: page.click("#chess-play"))
    expect(page.locator("#chess-status")).to_contain_text("Opponent played")
    page.get_by_label("Your move").fill("e9")
    page.click("#chess-play")  # its answer, not the last one's "Legal moves:", is waited for
    expect(page.locator("#chess-status")).to_contain_text("Could not read 'e9' as a move")
    expect(page.locator("#chess-status")).to_contain_text("Legal moves:")


@pytest.mark.browser
def test_the_trading_chart(serve: Any, new_page: Any) -> None:
    page = pages.open_ui(new_page(), serve(finance_app()).web_url)
    page.get_by_role("tab", name="Chart").click()
    page.get_by_label("Start date").fill("2014-01-02")
    page.click("#finance-new")
    src, drawn = picture(page, "finance-chart-img")
    assert_not_blank(drawn)
    page.get_by_role("spinbutton", name="Days per click").fill("10")
    changes_after(page, "finance-chart-img", src, lambda: page.click("#finance-step"))
    expect(page.locator("#finance-status")).to_contain_text("day 11 of 60")
