"""``finance-env-server`` and ``python -m finance_env.server``: serve the trading environment."""

from __future__ import annotations

import argparse
import os
import sys

from openenv_hub import run
from openenv_hub.errors import DependencyNotInstalledError


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the trading environment.")
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    args = parser.parse_args(argv)
    try:
        from finance_env.server.app import app
    except DependencyNotInstalledError as exc:  # the default data's extra: the install line
        print(f"Error: {exc}\nHint: {exc.hint}", file=sys.stderr)
        raise SystemExit(1) from None
    run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
