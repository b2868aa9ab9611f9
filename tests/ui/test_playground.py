"""The generated Playground in a real browser: forms, typed steps, errors, observations."""

from __future__ import annotations

import pytest
import ui_pages as pages
from playwright.sync_api import expect
from ui_envs import (
    AllFieldsAction,
    AllFieldsEnvironment,
    AllFieldsObservation,
    Color,
    Point,
    TypedEchoAction,
    TypedEchoEnvironment,
    TypedEchoObservation,
)

from openenv_hub import create_app

pytestmark = pytest.mark.browser


@pytest.fixture
def typed(serve):
    return serve(
        create_app(
            TypedEchoEnvironment,
            TypedEchoAction,
            TypedEchoObservation,
            env_name="typed_echo",
            web=True,
        )
    )


@pytest.fixture
def all_fields(serve):
    AllFieldsEnvironment.received.clear()
    app = create_app(
        AllFieldsEnvironment, AllFieldsAction, AllFieldsObservation, env_name="all_fields", web=True
    )
    return serve(app)


def test_typed_env_reset_step_history_and_download(typed, new_page):
    page = new_page()
    outside: list[str] = []
    page.on(
        "request",
        lambda r: (
            None if r.url.startswith((typed.base_url, "data:", "blob:")) else outside.append(r.url)
        ),
    )
    pages.open_ui(page, typed.web_url)
    expect(page.locator("#env-header")).to_contain_text("typed_echo")

    pages.reset(page)
    expect(page.locator("#observation")).to_contain_text("Typed Echo environment ready!")
    pages.fill(page, "message", "hello")
    pages.step(page, 1)

    expect(page.locator("#observation")).to_contain_text('"hello"')
    assert pages.metric(page, "reward") == "0.5"
    assert pages.metric(page, "done") == "false"
    expect(page.locator("#state")).to_contain_text('"step_count": 1')
    rows = pages.history_rows(page, 2)
    assert [row[0] for row in rows] == ["0", "1"]
    assert rows[0][1] == "reset()"
    assert rows[1][1:4] == ['{"message": "hello"}', "0.5", "false"]

    records = pages.download_history(page)
    assert [r["kind"] for r in records] == ["reset", "step"]
    assert records[1]["action"] == {"message": "hello"}
    assert records[1]["reward"] == 0.5
    assert records[1]["observation"]["echoed_message"] == "hello"
    assert outside == []  # no fonts or scripts fetched from elsewhere


def test_every_field_kind_reaches_the_environment_typed(all_fields, new_page):
    page = pages.open_ui(new_page(), all_fields.web_url)
    pages.reset(page, seed="7")
    expect(page.locator("#state")).to_contain_text('"seed": 7')

    pages.fill(page, "text", "hello")
    pages.fill(page, "count", "4")
    pages.fill(page, "ratio", "0.25")
    page.check("#field-flag input")
    pages.choose(page, "field-mode", "slow")
    pages.choose(page, "field-color", "blue")
    pages.fill_json(page, "items", "[1, 2, 3]")
    pages.fill_json(page, "weights", '{"a": 0.5, "b": 2}')
    pages.fill_json(page, "point", '{"x": 3, "y": 1.5}')
    pages.fill(page, "limit", "9")
    pages.step(page, 1)

    (action,) = AllFieldsEnvironment.received
    assert action == AllFieldsAction(
        text="hello",
        count=4,
        ratio=0.25,
        flag=True,
        mode="slow",
        color=Color.BLUE,
        items=[1, 2, 3],
        weights={"a": 0.5, "b": 2.0},
        point=Point(x=3, y=1.5),
        limit=9,
    )
    assert type(action.count) is int and type(action.ratio) is float
    assert type(action.limit) is int and type(action.point.x) is int
    assert pages.metric(page, "reward") == "4.0"
    assert pages.metric(page, "done") == "true"


def test_defaults_are_prefilled_and_sent(all_fields, new_page):
    page = pages.open_ui(new_page(), all_fields.web_url)
    expect(page.locator("#field-count")).to_contain_text("0 ≤ x ≤ 10")
    expect(page.locator("#field-ratio")).to_contain_text("0 < x < 1")
    expect(page.locator("#field-text")).to_contain_text("'boom' makes the environment raise")
    pages.reset(page)
    pages.fill(page, "text", "defaults")
    pages.step(page, 1)
    (action,) = AllFieldsEnvironment.received
    assert action == AllFieldsAction(text="defaults")


def test_observation_images_and_long_text_are_rendered(all_fields, new_page):
    page = pages.open_ui(new_page(), all_fields.web_url)
    pages.reset(page)
    pages.fill(page, "text", "pictures")
    pages.step(page, 1)
    gallery = page.locator("#obs-images")
    expect(gallery).to_be_visible()
    expect(gallery.locator("img")).to_have_count(2)
    expect(gallery).to_contain_text("frame")
    expect(gallery).to_contain_text("thumbnail")
    expect(page.locator("#obs-text")).to_contain_text("line 11: pictures")
    expect(page.locator("#observation")).to_contain_text("<image 12x8 RGB, shown above>")


@pytest.mark.parametrize(
    ("widget", "value", "expected"),
    [
        ("count", "99", "count: Input should be less than or equal to 10"),
        ("ratio", "1", "ratio: Input should be less than 1"),
        ("items", "[1, 2", "items: not valid JSON"),
        ("point", '{"y": 2}', "point.x: Field required"),
        ("limit", "many", "limit: 'many' is not a number"),
    ],
)
def test_invalid_values_show_the_field_and_the_page_keeps_working(
    all_fields, new_page, widget, value, expected
):
    page = pages.open_ui(new_page(), all_fields.web_url)
    pages.reset(page)
    pages.fill(page, "text", "x")
    if widget in ("items", "point"):
        pages.fill_json(page, widget, value)
    else:
        pages.fill(page, widget, value)
    pages.click(page, "step-btn")
    pages.expect_banner(page, "Invalid action", expected)
    expect(page.locator("#action-status")).to_contain_text(expected)  # also next to Step
    assert AllFieldsEnvironment.received == []

    if widget in ("items", "point"):
        pages.fill_json(page, widget, "[]" if widget == "items" else '{"x": 1}')
    else:
        pages.fill(page, widget, "5" if widget != "ratio" else "0.5")
    pages.step(page, 1)
    expect(page.locator("#action-status")).to_have_text("")
    assert len(AllFieldsEnvironment.received) == 1


def test_an_exception_in_the_environment_is_shown_not_a_500(all_fields, new_page):
    page = pages.open_ui(new_page(), all_fields.web_url)
    pages.reset(page)
    pages.fill(page, "text", "boom")
    pages.click(page, "step-btn")
    pages.expect_banner(
        page, "The environment raised an error", "RuntimeError: boom went the environment"
    )
    pages.fill(page, "text", "fine")
    pages.step(page, 1)
    assert all_fields.pool.active_sessions == 1


def test_a_freshly_initialised_environment_works_without_code(
    serve, new_page, tmp_path, monkeypatch
):
    import importlib

    from openenv_hub_cli.main import main as openenv

    with pytest.raises(SystemExit) as done:
        openenv(["init", "fresh_env", "--no-input", "--output-dir", str(tmp_path)])
    assert done.value.code in (0, None)
    monkeypatch.syspath_prepend(str(tmp_path / "fresh_env"))
    monkeypatch.setenv("ENABLE_WEB_INTERFACE", "true")
    server = serve(importlib.import_module("fresh_env.server.app").app)

    page = pages.open_ui(new_page(), server.web_url)
    expect(page.locator("#env-header")).to_contain_text("fresh_env")
    pages.reset(page)
    expect(page.locator("#observation")).to_contain_text("Fresh Env environment ready!")
    pages.fill(page, "message", "hello")
    pages.step(page, 1)
    expect(page.locator("#observation")).to_contain_text('"echoed_message": "hello"')
    assert pages.metric(page, "reward") == "0.5"
    assert pages.history_rows(page, 2)[1][1] == '{"message": "hello"}'
