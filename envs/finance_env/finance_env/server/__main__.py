"""``finance-env-server`` and ``python -m finance_env.server``: serve the trading environment.

The script lives here, not in ``app.py``, so that it starts before the app is imported: a plain
install, without the default data's extra, then stops with the install line, not a traceback.
"""

from __future__ import annotations

from openenv_hub.server import serve_main


def main(argv: list[str] | None = None) -> None:
    """``finance-env-server``: serve the app (``--help`` for the options of :func:`serve_main`)."""
    serve_main("finance_env.server.app:app", argv)


if __name__ == "__main__":
    main()
