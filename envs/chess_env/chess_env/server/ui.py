"""The Board tab: the position drawn as SVG, a move box, and the game's settings."""

from __future__ import annotations

from typing import Any

import chess
import chess.svg
import gradio as gr

from openenv_hub.errors import ServerReplyError
from openenv_hub.ui import UIContext
from openenv_hub.ui.media import image_html, svg_data_uri


def board_html(observation: dict[str, Any]) -> str:
    """The observation's position as an ``<img>`` of an SVG board, from the agent's side."""
    board = chess.Board(observation["fen"])
    played = observation.get("opponent_move") or observation.get("last_move")
    svg = chess.svg.board(
        board,
        orientation=chess.WHITE if observation["agent_color"] == "white" else chess.BLACK,
        lastmove=chess.Move.from_uci(played) if played else None,
        check=board.king(board.turn) if board.is_check() else None,
        size=420,
    )
    alt = f"Chess board, {observation['turn']} to move, position {observation['fen']}"
    return image_html(svg_data_uri(svg), alt=alt, elem_id="chess-board-img", width=420)


def _legal_san(observation: dict[str, Any]) -> str:
    board = chess.Board(observation["fen"])
    return ", ".join(board.san(move) for move in board.legal_moves)


def _status(observation: dict[str, Any]) -> str:
    if observation.get("error"):
        return f"⚠️ {observation['error']}. Legal moves: {_legal_san(observation)}"
    parts = []
    if observation.get("opponent_move_san"):
        parts.append(f"Opponent played **{observation['opponent_move_san']}**.")
    if observation.get("result"):
        parts.append(f"Game over: **{observation['result']}** ({observation['reason']}).")
    else:
        parts.append(f"You play {observation['agent_color']}; {observation['turn']} to move.")
        parts.append(f"Legal moves: {_legal_san(observation)}")
    return " ".join(parts)


def board_tab(ctx: UIContext) -> gr.Blocks:
    """Start a game against an opponent, then type moves."""
    with gr.Blocks(title="Board") as blocks:
        with gr.Row():
            with gr.Column(scale=2, min_width=260):
                opponent = gr.Dropdown(
                    ["random", "search", "stockfish", "none"], value="random", label="Opponent",
                    elem_id="chess-opponent",
                )  # fmt: skip
                color = gr.Radio(["white", "black"], value="white", label="You play",
                                 elem_id="chess-color")  # fmt: skip
                start = gr.Button("New game", elem_id="chess-new")
                move = gr.Textbox(label="Your move", placeholder="e4, Nf3 or e2e4",
                                  elem_id="chess-move")  # fmt: skip
                play = gr.Button("Play", variant="primary", elem_id="chess-play")
            with gr.Column(scale=3, min_width=320):
                picture = gr.HTML("<p>Press <b>New game</b> to start.</p>", elem_id="chess-board")
                status = gr.Markdown("", elem_id="chess-status")

        async def on_start(request: gr.Request, who: str, side: str) -> tuple[Any, str]:
            try:
                payload = await ctx.pool.reset(
                    await ctx.session(request), {"opponent": who, "agent_color": side}
                )
            except ServerReplyError as exc:
                return gr.update(), f"⚠️ {exc.message}"
            return board_html(payload["observation"]), _status(payload["observation"])

        async def on_play(request: gr.Request, text: str) -> tuple[Any, str, str]:
            try:
                action = ctx.pool.parse_action({"move": text or " "})
                payload = await ctx.pool.step(await ctx.session(request), action)
            except (ServerReplyError, ValueError) as exc:
                return gr.update(), f"⚠️ {getattr(exc, 'message', exc)}", text
            observation = payload["observation"]
            kept = text if observation.get("error") else ""
            return board_html(observation), _status(observation), kept

        start.click(on_start, inputs=[opponent, color], outputs=[picture, status])
        play.click(on_play, inputs=[move], outputs=[picture, status, move])
        move.submit(on_play, inputs=[move], outputs=[picture, status, move])
    return blocks
