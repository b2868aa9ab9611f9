"""The ``ui_builder`` hook: an environment's own gradio tab, beside or instead of the generated one."""

from __future__ import annotations

import gradio as gr
import httpx
import pytest
import ui_pages as pages
from playwright.sync_api import expect
from ui_envs import TypedEchoAction, TypedEchoEnvironment, TypedEchoObservation

from openenv_hub import create_app
from openenv_hub.ui import UIContext


def board(ctx: UIContext) -> gr.Blocks:
    """A custom tab that steps the environment through the tab's own session."""
    with gr.Blocks(title="Board") as blocks:
        gr.Markdown(f"## {ctx.metadata.name} board", elem_id="board-title")
        word = gr.Textbox(label="Word", elem_id="board-word")
        out = gr.JSON(elem_id="board-out")

        async def shout(request: gr.Request, text: str) -> dict:
            session = await ctx.session(request)
            await ctx.pool.reset(session, {})
            action = ctx.pool.parse_action({"message": text.upper()})
            return await ctx.pool.step(session, action)

        gr.Button("Shout", elem_id="board-shout").click(shout, inputs=word, outputs=out)
    return blocks


def app(**options):
    return create_app(
        TypedEchoEnvironment,
        TypedEchoAction,
        TypedEchoObservation,
        env_name="typed_echo",
        web=True,
        ui_builder=board,
        **options,
    )


@pytest.mark.browser
def test_custom_tab_next_to_the_playground_shares_the_tab_session(serve, new_page):
    served = serve(app())
    page = pages.open_ui(new_page(), served.web_url)
    page.get_by_role("tab", name="Board").click()
    expect(page.locator("#board-title")).to_contain_text("typed_echo board")
    pages.fill(page, "Word", "hey")
    page.click("#board-shout")
    expect(page.locator("#board-out")).to_contain_text('"HEY"')
    assert served.pool.active_sessions == 1  # the Playground's session, reused


@pytest.mark.browser
def test_show_default_false_shows_only_the_custom_tab(serve, new_page):
    served = serve(app(show_default_ui=False))
    page = new_page()
    page.goto(served.web_url)
    expect(page.locator("#board-title")).to_be_visible()
    expect(page.locator("#reset-btn")).to_have_count(0)
    assert served.pool.active_sessions == 0  # a session is opened only when the tab uses one
    pages.fill(page, "Word", "quiet")
    page.click("#board-shout")
    expect(page.locator("#board-out")).to_contain_text('"QUIET"')
    assert served.pool.active_sessions == 1
    page.close()
    served.wait_sessions(0)


def test_a_builder_that_returns_no_blocks_is_reported_at_web(serve):
    """The UI is built after the server starts: the API keeps serving, /web says what is wrong."""
    served = serve(
        create_app(TypedEchoEnvironment, TypedEchoAction, web=True, ui_builder=lambda ctx: 42)
    )
    page = httpx.get(served.web_url)
    assert page.status_code == 500
    assert "ui_builder must return a gradio.Blocks, got int" in page.text
    assert httpx.get(f"{served.base_url}/health").status_code == 200


def test_the_builder_receives_schemas_and_metadata(serve):
    seen: list[UIContext] = []

    def builder(ctx: UIContext) -> gr.Blocks:
        seen.append(ctx)
        with gr.Blocks() as blocks:
            gr.Markdown("custom")
        return blocks

    serve(
        create_app(
            TypedEchoEnvironment, TypedEchoAction, TypedEchoObservation, web=True,
            ui_builder=builder,
        )
    )  # fmt: skip
    (ctx,) = seen
    assert ctx.metadata.name == "TypedEchoEnvironment"
    assert ctx.action_schema == TypedEchoAction.model_json_schema()
    assert "echoed_message" in ctx.observation_schema["properties"]
    assert ctx.pool.action_cls is TypedEchoAction
