"""The one command line an environment's server starts from.

``python -m openenv_hub.server APP`` (what the Space images run), each environment's
``NAME-server`` script and ``python -m NAME.server.app`` all parse their options here, with the
same defaults, and serve with :func:`openenv_hub.server.app.serve_app`::

    python -m openenv_hub.server my_env.server.app:app --port 8000
    my-env-server --port 8000 --reload
    python -m openenv_hub.server my_env.server.app:app --workers 4   # one address, 4 processes

``--port`` defaults to ``$PORT`` (as Spaces and the runtimes set it), else 8000, the port the
manifest and the Dockerfile declare; ``--host`` to ``$OPENENV_HOST``, else 127.0.0.1. The
images set ``OPENENV_HOST=0.0.0.0`` (a Space's app must listen on every interface of its
container); a runtime that runs one in the host's network sets ``OPENENV_HOST=127.0.0.1``.

Layer: server.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import openenv_hub.server.settings as settings
from openenv_hub.errors import OpenEnvError
from openenv_hub.server.app import serve_app

__all__ = ["DEFAULT_PORT", "serve_main"]

DEFAULT_PORT = 8000
"""The port a server listens on when neither ``--port`` nor ``$PORT`` names one."""


def serve_main(app: str | None = None, argv: Sequence[str] | None = None) -> None:
    """Parse a server's command line (``argv``, default ``sys.argv[1:]``) and serve.

    Args:
        app: The ASGI app as ``module.path:attribute``; ``None`` reads it from the command line.
        argv: The options: ``--host``, ``--port``, ``--log-level``, ``--reload``, ``--workers``.

    An environment's ``main`` is this, with its app::

        def main(argv: list[str] | None = None) -> None:
            serve_main("my_env.server.app:app", argv)

    An :class:`~openenv_hub.errors.OpenEnvError` raised while the app loads (an extra that is
    not installed, say) exits with its message and hint, without a traceback.
    """
    args = _parser(app).parse_args(argv)
    target: str = app or args.app
    _reuse_the_running_module(target)
    try:
        serve_app(
            target,
            host=args.host,
            port=args.port,
            reload=args.reload,
            log_level=args.log_level,
            workers=args.workers,
        )
    except OpenEnvError as exc:
        print(f"Error: {exc}" + (f"\nHint: {exc.hint}" if exc.hint else ""), file=sys.stderr)
        raise SystemExit(1) from None


def _parser(app: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=None if app else "python -m openenv_hub.server",
        description=f"Serve {app or 'an environment app'} (HTTP, /ws, /mcp) with openenv-hub's "
        "settings.",
    )
    if app is None:
        parser.add_argument("app", help="the ASGI app, as module.path:attribute")
    parser.add_argument(
        "--host",
        default=settings.default_host() or "127.0.0.1",
        help="interface (default: $OPENENV_HOST, else 127.0.0.1)",
    )
    parser.add_argument(
        "--port",
        type=_port,
        default=settings.default_port() or str(DEFAULT_PORT),  # parsed by _port, as given ones
        help=f"port (default: $PORT, else {DEFAULT_PORT})",
    )
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--reload", action="store_true", help="restart when the code changes")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="serve the address from N processes, each with its own sessions (default 1)",
    )
    return parser


def _port(value: str) -> int:
    if not value.strip().isdigit() or not 0 < int(value) < 65536:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a port number (1-65535): give --port N, or set PORT to one"
        )
    return int(value)


def _reuse_the_running_module(target: str) -> None:
    """Under ``python -m NAME.server.app`` the app's module runs as ``__main__``: let the import
    of ``NAME.server.app`` find it, rather than build the app a second time."""
    running = sys.modules.get("__main__")
    spec = getattr(running, "__spec__", None)
    module = target.partition(":")[0]
    if running is not None and spec is not None and spec.name == module:
        sys.modules.setdefault(module, running)
