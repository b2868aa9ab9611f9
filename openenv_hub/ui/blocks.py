"""The gradio Blocks of the web UI: header, Playground, README and custom tabs.

Every handler is a coroutine running on the server's event loop and calls
:class:`~openenv_hub.ui.actions.Actions`, which drives the environment through the session
core. Handlers read widgets raw (``preprocess=False``) so that bounds and types are checked
by the action model, whose errors name the field.

Layer: ui.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any, cast

import gradio as gr

from openenv_hub.server.watch import session_watch
from openenv_hub.ui.actions import Actions
from openenv_hub.ui.context import UIContext
from openenv_hub.ui.replay_tab import replay_tab
from openenv_hub.ui.schema import FieldSpec, collect, form_fields
from openenv_hub.ui.sessions_tab import sessions_tab
from openenv_hub.ui.view import ResultView
from openenv_hub.ui.widgets import field_widget

__all__ = ["build_blocks"]

_EVENT: dict[str, Any] = {
    "api_visibility": "private",
    "concurrency_limit": None,  # sessions are independent; each has its own lock
    "show_progress": "minimal",
}


def build_blocks(
    ctx: UIContext,
    actions: Actions,
    *,
    show_default: bool = True,
    custom_builder: Callable[[UIContext], Any] | None = None,
) -> gr.Blocks:
    """The whole UI. ``custom_builder(ctx)`` must return a ``gr.Blocks``; it becomes a tab."""
    custom = _custom_blocks(custom_builder, ctx)
    meta = ctx.metadata
    # delete_cache: images and history files gradio copies to its cache go after an hour.
    demo = gr.Blocks(
        title=f"{meta.name} · OpenEnv", analytics_enabled=False, delete_cache=(3600, 3600)
    )
    with demo:
        _header(ctx)
        view = ResultView(actions)
        if show_default:
            view.build_banner()
        with gr.Tabs() as tabs:
            if show_default:
                with gr.Tab("Playground", id="playground", elem_id="tab-playground"):
                    load_outputs, on_load = _playground(ctx, actions, view)
                with gr.Tab("Replay", id="replay", elem_id="tab-replay"):
                    replay_tab(actions, view, tabs)
                with gr.Tab("Sessions", id="sessions", elem_id="tab-sessions"):
                    sessions_tab(actions, view, tabs, session_watch(ctx.pool))
            if custom is not None:
                with gr.Tab(_tab_name(custom), id="custom", elem_id="tab-custom"):
                    cast(Any, custom).render()  # gradio leaves render() unannotated
            with gr.Tab("README", id="readme", elem_id="tab-readme"):
                gr.Markdown(ctx.readme or "*No README available.*", elem_id="readme")
        if show_default:
            demo.load(on_load, outputs=load_outputs, **_EVENT)

        async def on_unload(request: gr.Request) -> None:
            await actions.close(request.session_hash or "")

        demo.unload(on_unload)
    return demo


def _custom_blocks(builder: Callable[[UIContext], Any] | None, ctx: UIContext) -> gr.Blocks | None:
    if builder is None:
        return None
    blocks: object = builder(ctx)
    if not isinstance(blocks, gr.Blocks):
        raise TypeError(f"ui_builder must return a gradio.Blocks, got {type(blocks).__name__}")
    return blocks


def _tab_name(blocks: gr.Blocks) -> str:
    title = str(blocks.title)
    return title if title and title != "Gradio" else "Custom"


def _header(ctx: UIContext) -> None:
    meta = ctx.metadata
    version = (
        f'<span class="oe-version">v{html.escape(meta.version)}</span>' if meta.version else ""
    )
    links = ' · <a href="../docs" target="_blank">API docs</a>'
    gr.HTML(
        f"<h1>{html.escape(meta.name)}{version}</h1><p>{html.escape(meta.description)}{links}</p>",
        elem_classes="oe-header",
        elem_id="env-header",
    )


def _playground(
    ctx: UIContext, actions: Actions, view: ResultView
) -> tuple[list[Any], Callable[..., Any]]:
    """Lay out the two panes and the history; return the load event's outputs and handler."""
    tools_ui = ctx.pool.supports_tools
    specs = [] if tools_ui and _only_tool_actions(ctx) else form_fields(ctx.action_schema)
    picker: Any = None
    tools_state: Any = None
    wiring: list[Callable[[], None]] = []  # events need the result components to exist
    with gr.Row(equal_height=False):
        with gr.Column(scale=5, min_width=320):
            wiring.append(_episode_controls(actions, view))
            if tools_ui:
                picker, tools_state = _tools_section(actions, view)
            if specs or not tools_ui:
                wiring.append(_action_section(actions, view, specs))
        with gr.Column(scale=7, min_width=360):
            view.build_observation()
    view.build_history()
    for wire in wiring:
        wire()

    async def on_load(request: gr.Request) -> dict[Any, Any]:
        key = request.session_hash or ""
        changes = view.updates(await actions.open(key))
        if picker is not None:
            tools = await actions.list_tools(key)
            names = [tool.name for tool in tools]
            changes[tools_state] = [tool.model_dump() for tool in tools]
            changes[picker] = gr.update(choices=names, value=names[0] if names else None)
        return changes

    outputs = view.outputs() + ([picker, tools_state] if picker is not None else [])
    return outputs, on_load


def _only_tool_actions(ctx: UIContext) -> bool:
    """Whether the action model is just the MCP tool messages (the tool form covers it)."""
    return {"tool_name", "arguments"} <= set(ctx.action_schema.get("properties", {}))


def _action_section(
    actions: Actions, view: ResultView, specs: list[FieldSpec]
) -> Callable[[], None]:
    gr.Markdown("### Action", elem_classes="oe-pane-title")
    widgets = [field_widget(spec) for spec in specs]
    if not specs:
        gr.Markdown("*This action has no fields.*")
    step = gr.Button("Step", variant="primary", elem_id="step-btn")
    view.build_inline_status("action")

    async def on_step(request: gr.Request, *values: Any) -> dict[Any, Any]:
        data, errors = collect(specs, values)
        return view.updates(await actions.step(request.session_hash or "", data, errors))

    def wire() -> None:
        step.click(on_step, inputs=widgets, outputs=view.outputs(), preprocess=False, **_EVENT)

    return wire


def _episode_controls(actions: Actions, view: ResultView) -> Callable[[], None]:
    gr.Markdown("### Episode", elem_classes="oe-pane-title")
    seed = gr.Textbox(
        label="Seed", info="optional, passed to reset()", placeholder="none", elem_id="seed"
    )
    with gr.Row():
        reset = gr.Button("Reset", variant="secondary", elem_id="reset-btn")
        state = gr.Button("State", variant="secondary", elem_id="state-btn")

    async def on_reset(request: gr.Request, seed_text: Any) -> dict[Any, Any]:
        text = seed_text if isinstance(seed_text, str) else None
        return view.updates(await actions.reset(request.session_hash or "", text))

    async def on_state(request: gr.Request) -> dict[Any, Any]:
        return view.updates(await actions.read_state(request.session_hash or ""))

    def wire() -> None:
        reset.click(on_reset, inputs=[seed], outputs=view.outputs(), preprocess=False, **_EVENT)
        state.click(on_state, outputs=view.outputs(), **_EVENT)

    return wire


def _tools_section(actions: Actions, view: ResultView) -> tuple[Any, Any]:
    gr.Markdown("### Tools", elem_classes="oe-pane-title")
    tools_state = gr.State([])
    picker = gr.Dropdown(choices=[], label="Tool", elem_id="tool-picker", interactive=True)

    def tool_form(name: str | None, tools: list[dict[str, Any]]) -> None:
        tool = next((t for t in tools or [] if t["name"] == name), None)
        if tool is None:
            gr.Markdown("*Pick a tool.*" if tools else "*No tools listed yet.*")
            return
        if tool.get("description"):
            gr.Markdown(_first_paragraph(tool["description"]), elem_id="tool-description")
        specs = form_fields(tool.get("input_schema", {}), skip=())
        widgets = [field_widget(spec, prefix="tool-arg") for spec in specs]
        call = gr.Button(f"Call {name}", variant="primary", elem_id="call-tool")

        async def on_call(request: gr.Request, *values: Any) -> dict[Any, Any]:
            arguments, errors = collect(specs, values)
            key = request.session_hash or ""
            return view.updates(await actions.call_tool(key, str(name), arguments, errors))

        call.click(on_call, inputs=widgets, outputs=view.outputs(), preprocess=False, **_EVENT)

    render: Callable[..., Any] = gr.render  # re-run tool_form whenever another tool is picked
    render(inputs=[picker, tools_state], triggers=[picker.change])(tool_form)
    view.build_inline_status("tool")
    return picker, tools_state


def _first_paragraph(text: str) -> str:
    return text.strip().split("\n\n", 1)[0]
