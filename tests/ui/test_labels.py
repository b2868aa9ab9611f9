"""Every generated form field has an accessible name: the field's own name, which a screen
reader announces and ``page.get_by_label`` finds (gradio alone gives JSON editors, drop-downs
and text boxes with hints no usable name)."""

from __future__ import annotations

import pytest
import ui_pages as pages
from echo_env.server.environment import EchoEnvironment
from playwright.sync_api import expect
from ui_envs import AllFieldsAction, AllFieldsEnvironment, AllFieldsObservation

from openenv_hub import CallToolAction, CallToolObservation, create_app
from openenv_hub.ui.schema import form_fields

pytestmark = pytest.mark.browser


def test_every_field_of_every_kind_is_found_by_its_name(serve, new_page):
    app = create_app(AllFieldsEnvironment, AllFieldsAction, AllFieldsObservation, web=True)
    page = pages.open_ui(new_page(), serve(app).web_url)
    names = [spec.name for spec in form_fields(AllFieldsAction.model_json_schema())]
    assert {"text", "count", "flag", "mode", "items", "point", "limit"} <= set(names)
    for name in [*names, "Seed"]:
        expect(pages.field(page, name)).to_have_count(1)
    expect(pages.field(page, "text")).to_have_attribute("aria-required", "true")
    expect(page.get_by_role("textbox", name="items", exact=True)).to_be_visible()  # JSON editor


def test_the_tool_picker_and_each_tool_argument_are_named(serve, new_page):
    app = create_app(EchoEnvironment, CallToolAction, CallToolObservation, web=True)
    page = pages.open_ui(new_page(), serve(app).web_url)
    expect(pages.field(page, "Tool")).to_have_count(1)
    pages.choose(page, "tool-picker", "echo_with_length")
    expect(pages.field(page, "message")).to_have_count(1)
