"""The CartPole server: ``uvicorn cartpole_env.server.app:app`` or ``cartpole-env-server``."""

from __future__ import annotations

from cartpole_env.models import FACTORY
from openenv_hub import create_app
from openenv_hub.server import serve_main

app = create_app(FACTORY, env_name="cartpole_env")


def main(argv: list[str] | None = None) -> None:
    """``cartpole-env-server``: serve this app (``--help`` for the options)."""
    serve_main("cartpole_env.server.app:app", argv)


if __name__ == "__main__":
    main()
