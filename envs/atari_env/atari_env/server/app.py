"""The Atari server: ``uvicorn atari_env.server.app:app`` or ``atari-env-server``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from atari_env.models import AtariAction, AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from openenv_hub import create_app, run
from openenv_hub.ui import UIContext

_README = Path(__file__).resolve().parents[2] / "README.md"


def build_ui(ctx: UIContext) -> Any:
    """The Game tab of the web UI (gradio is imported only when the UI is on)."""
    from atari_env.server.ui import game_tab

    return game_tab(ctx)


app = create_app(
    AtariEnvironment,
    AtariAction,
    AtariObservation,
    state_cls=AtariState,
    env_name="atari_env",
    readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
    ui_builder=build_ui,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the Atari environment.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args(argv)
    run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
