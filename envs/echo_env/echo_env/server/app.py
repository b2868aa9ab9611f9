"""The echo environment's server: ``uvicorn echo_env.server.app:app`` or ``python -m echo_env.server.app``."""

from __future__ import annotations

import argparse
from pathlib import Path

from echo_env.server.environment import EchoEnvironment
from openenv_hub import CallToolAction, CallToolObservation, create_app, run

_README = Path(__file__).resolve().parents[2] / "README.md"

app = create_app(
    EchoEnvironment,
    CallToolAction,
    CallToolObservation,
    env_name="echo_env",
    readme=_README.read_text(encoding="utf-8") if _README.is_file() else None,
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the echo environment.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
