"""The Chart tab: the portfolio's value and the prices, day by day, with trading controls."""

from __future__ import annotations

from typing import Any

import gradio as gr

from openenv_hub.errors import ServerReplyError
from openenv_hub.ui import UIContext
from openenv_hub.ui.media import image_html, line_chart_svg, svg_data_uri


def chart_html(state: dict[str, Any]) -> str:
    """Portfolio value and prices, both as a percentage of their first day, as an SVG chart."""
    values = state["portfolio_values"]
    series = {"portfolio": _relative(values)}
    for ticker, closes in state["closes"].items():
        series[ticker] = _relative(closes)
    dates = state["dates"]
    title = f"{state['data']}: portfolio value and prices, % of {dates[0]}"
    svg = line_chart_svg(series, title=title, x_labels=[dates[0], dates[-1]], y_label="%")
    alt = (
        f"Line chart from {dates[0]} to {dates[-1]}: the portfolio went from "
        f"{values[0]:,.0f} to {values[-1]:,.0f}"
    )
    return image_html(svg_data_uri(svg), alt=alt, elem_id="finance-chart-img")


def _relative(values: list[float]) -> list[float]:
    first = values[0] or 1.0
    return [100.0 * v / first for v in values]


def chart_tab(ctx: UIContext) -> gr.Blocks:
    """Choose a date range, then trade day by day and watch the chart."""
    with gr.Blocks(title="Chart") as blocks:
        with gr.Row():
            with gr.Column(scale=2, min_width=260):
                start_date = gr.Textbox(label="Start date", placeholder="2016-01-04",
                                        elem_id="finance-start")  # fmt: skip
                days = gr.Slider(5, 500, value=60, step=1, label="Trading days",
                                 elem_id="finance-days")  # fmt: skip
                start = gr.Button("New episode", elem_id="finance-new")
                actions = gr.Textbox(
                    label="Actions", value="0.5", elem_id="finance-actions",
                    info="one value in [-1, 1] per asset, comma-separated: buy > 0, sell < 0",
                )  # fmt: skip
                repeat = gr.Slider(1, 60, value=1, step=1, label="Days per click",
                                   elem_id="finance-repeat")  # fmt: skip
                step = gr.Button("Trade", variant="primary", elem_id="finance-step")
            with gr.Column(scale=3, min_width=320):
                picture = gr.HTML("<p>Press <b>New episode</b> to start.</p>",
                                  elem_id="finance-chart")  # fmt: skip
                status = gr.Markdown("", elem_id="finance-status")

        async def on_start(request: gr.Request, first: str, count: Any) -> tuple[Any, str]:
            session = await ctx.session(request)
            params = {"start_date": first.strip() or None, "max_days": int(count)}
            try:
                payload = await ctx.pool.reset(session, params)
            except ServerReplyError as exc:
                return gr.update(), f"⚠️ {exc.message}"
            return chart_html(await ctx.pool.state(session)), _status(payload)

        async def on_step(request: gr.Request, text: str, times: Any) -> tuple[Any, str]:
            session = await ctx.session(request)
            try:
                values = [float(part) for part in text.replace(" ", "").split(",") if part]
                action = ctx.pool.parse_action({"actions": values})
                for _ in range(int(times or 1)):
                    payload = await ctx.pool.step(session, action)
                    if payload["done"]:
                        break
            except (ServerReplyError, ValueError) as exc:
                return gr.update(), f"⚠️ {getattr(exc, 'message', exc)}"
            return chart_html(await ctx.pool.state(session)), _status(payload)

        start.click(on_start, inputs=[start_date, days], outputs=[picture, status])
        step.click(on_step, inputs=[actions, repeat], outputs=[picture, status])
    return blocks


def _status(payload: dict[str, Any]) -> str:
    observation = payload["observation"]
    holdings = ", ".join(
        f"{ticker} {held}"
        for ticker, held in zip(observation["tickers"], observation["holdings"], strict=True)
    )
    ended = " · **episode over**" if payload["done"] else ""
    return (
        f"**{observation['date']}** · day {observation['day'] + 1} of {observation['days']} · "
        f"value {observation['portfolio_value']:,.2f} · cash {observation['cash']:,.2f} · "
        f"holdings {holdings}{ended}"
    )
