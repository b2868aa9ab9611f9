"""``python -m openenv_hub.server APP``: serve an app with the server's own settings.

The Space images run this, so a Space serves with the same WebSocket implementation, frame
limit, keepalive and graceful shutdown as ``openenv serve`` and :func:`openenv_hub.serve_app`::

    python -m openenv_hub.server my_env.server.app:app --host 0.0.0.0 --port 8000

The options and their defaults are those of every environment's ``NAME-server`` script (see
:mod:`openenv_hub.server.command`).
"""

from __future__ import annotations

from openenv_hub.server.command import serve_main


def main(argv: list[str] | None = None) -> None:
    serve_main(None, argv)


if __name__ == "__main__":
    main()
