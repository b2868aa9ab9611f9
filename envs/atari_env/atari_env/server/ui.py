"""The Game tab: the screen as the agent sees it, the game's actions by name, and a Step button."""

from __future__ import annotations

from typing import Any

import gradio as gr

from atari_env.server.environment import Settings, all_games
from openenv_hub.errors import ServerReplyError
from openenv_hub.ui import UIContext
from openenv_hub.ui.media import image_html


def frame_html(payload: dict[str, Any], game: str) -> str:
    """The frame of a reset/step reply as an ``<img>``, described for screen readers."""
    observation = payload["observation"]
    frame = observation.get("frame")
    if not frame:
        return f"<p>{game}: this episode observes RAM, so there is no screen to show.</p>"
    alt = (
        f"{game} screen at frame {observation['episode_frame_number']}, "
        f"{observation['lives']} lives left"
    )
    return image_html(frame, alt=alt, elem_id="atari-frame-img", width=480, pixelated=True)


def game_tab(ctx: UIContext) -> gr.Blocks:
    """Pick a game, start it, then step with a named action (several frames per click)."""
    with gr.Blocks(title="Game") as blocks:
        with gr.Row():
            with gr.Column(scale=2, min_width=260):
                game = gr.Dropdown(
                    all_games(), value=Settings.from_environment().game, label="Game",
                    elem_id="atari-game",
                )  # fmt: skip
                seed = gr.Textbox(label="Game seed", placeholder="none", elem_id="atari-seed")
                start = gr.Button("New game", elem_id="atari-new")
                action = gr.Radio([], label="Action", elem_id="atari-action")
                repeat = gr.Slider(1, 60, value=1, step=1, label="Steps per click",
                                   elem_id="atari-repeat")  # fmt: skip
                step = gr.Button("Step", variant="primary", elem_id="atari-step")
            with gr.Column(scale=3, min_width=320):
                picture = gr.HTML("<p>Press <b>New game</b> to start.</p>", elem_id="atari-frame")
                status = gr.Markdown("", elem_id="atari-status")

        async def on_start(request: gr.Request, name: str, seed_text: str) -> tuple[Any, ...]:
            params: dict[str, Any] = {"game": name}
            if seed_text and seed_text.strip():
                if not seed_text.strip().isdigit():
                    return gr.update(), "Seed must be a whole number ≥ 0.", gr.update()
                params["seed"] = int(seed_text)
            try:
                payload = await ctx.pool.reset(await ctx.session(request), params)
            except ServerReplyError as exc:
                return gr.update(), f"Could not start {name}: {exc.message}", gr.update()
            meanings = payload["observation"]["action_meanings"]
            choices = [(f"{i} {meaning}", i) for i, meaning in enumerate(meanings)]
            text = _status(payload, 0.0, name)
            return frame_html(payload, name), text, gr.update(choices=choices, value=0)

        async def on_step(request: gr.Request, chosen: Any, times: Any) -> tuple[str, str]:
            session = await ctx.session(request)
            payload: dict[str, Any] | None = None
            try:
                action = ctx.pool.parse_action({"action": int(chosen or 0)})
                for _ in range(int(times or 1)):
                    payload = await ctx.pool.step(session, action)
                    if payload["done"]:
                        break
            except ServerReplyError as exc:
                return gr.update(), f"{exc.message}"  # type: ignore[return-value]
            state = await ctx.pool.state(session)
            assert payload is not None
            return frame_html(payload, state["game"]), _status(
                payload, state["episode_return"], state["game"]
            )

        start.click(on_start, inputs=[game, seed], outputs=[picture, status, action])
        step.click(on_step, inputs=[action, repeat], outputs=[picture, status])
    return blocks


def _status(payload: dict[str, Any], score: float, game: str) -> str:
    observation = payload["observation"]
    ended = " · **game over**" if payload["done"] else ""
    return (
        f"**{game}** · score {score:g} · lives {observation['lives']} · "
        f"frame {observation['episode_frame_number']}{ended}"
    )
