"""The chess server: ``uvicorn chess_env.server.app:app`` or ``chess-env-server``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chess_env.models import ChessAction, ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from openenv_hub import create_app
from openenv_hub.server import serve_main
from openenv_hub.ui import UIContext

_README = Path(__file__).resolve().parents[2] / "README.md"


def build_ui(ctx: UIContext) -> Any:
    """The Board tab of the web UI (gradio is imported only when the UI is on)."""
    from chess_env.server.ui import board_tab

    return board_tab(ctx)


app = create_app(
    ChessEnvironment,
    ChessAction,
    ChessObservation,
    state_cls=ChessState,
    env_name="chess_env",
    readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
    ui_builder=build_ui,
)


def main(argv: list[str] | None = None) -> None:
    """``chess-env-server``: serve this app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("chess_env.server.app:app", argv)


if __name__ == "__main__":
    main()
