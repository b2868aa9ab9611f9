"""The echo environment's server: ``uvicorn echo_env.server.app:app`` or ``echo-env-server``."""

from __future__ import annotations

from pathlib import Path

from echo_env.server.environment import EchoEnvironment
from openenv_hub import CallToolAction, CallToolObservation, create_app
from openenv_hub.server import serve_main

_README = Path(__file__).resolve().parents[2] / "README.md"

app = create_app(
    EchoEnvironment,
    CallToolAction,
    CallToolObservation,
    env_name="echo_env",
    readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
)


def main(argv: list[str] | None = None) -> None:
    """``echo-env-server``: serve this app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("echo_env.server.app:app", argv)


if __name__ == "__main__":
    main()
