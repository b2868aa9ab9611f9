"""``python -m openenv_hub.server APP``: serve an app with the server's own settings.

The Space images run this, so a Space serves with the same WebSocket implementation, frame
limit, keepalive and graceful shutdown as ``openenv serve`` and :func:`openenv_hub.run`::

    python -m openenv_hub.server my_env.server.app:app --host 0.0.0.0 --port 8000

``--port`` defaults to ``$PORT`` (as Spaces set it), else 8000; ``--host`` to
``$OPENENV_HOST``, else 127.0.0.1. The images set ``OPENENV_HOST=0.0.0.0`` (a Space's app must
listen on every interface of its container); a runtime that runs one in the host's network sets
``OPENENV_HOST=127.0.0.1``.
"""

from __future__ import annotations

import argparse
import os
import sys

from openenv_hub.errors import OpenEnvError
from openenv_hub.server.app import run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m openenv_hub.server",
        description="Serve an environment's app (HTTP, /ws, /mcp) with openenv-hub's settings.",
    )
    parser.add_argument("app", help="the ASGI app, as module.path:attribute")
    parser.add_argument(
        "--host",
        default=os.environ.get("OPENENV_HOST") or "127.0.0.1",
        help="interface (default: $OPENENV_HOST, else 127.0.0.1)",
    )
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000))
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    try:
        run(args.app, host=args.host, port=args.port, log_level=args.log_level)
    except OpenEnvError as exc:  # e.g. the app needs an extra: say which, without a traceback
        print(f"Error: {exc}" + (f"\nHint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
