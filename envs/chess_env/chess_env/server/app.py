"""The chess server: ``uvicorn chess_env.server.app:app`` or ``chess-env-server``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from chess_env.models import ChessAction, ChessObservation, ChessState
from chess_env.server.environment import ChessEnvironment
from openenv_hub import create_app, run
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
    parser = argparse.ArgumentParser(description="Serve the chess environment.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args(argv)
    run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
