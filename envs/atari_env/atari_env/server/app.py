"""The Atari server: ``uvicorn atari_env.server.app:app`` or ``atari-env-server``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atari_env.models import AtariAction, AtariObservation, AtariState
from atari_env.server.environment import AtariEnvironment
from openenv_hub import create_app
from openenv_hub.server import serve_main
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
    """``atari-env-server``: serve this app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("atari_env.server.app:app", argv)


if __name__ == "__main__":
    main()
