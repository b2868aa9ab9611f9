"""Run LocalHub by hand: ``python -m openenv_hub.testing.localhub --port 8765 --data DIR``."""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Sequence

from .server import LocalHub


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m openenv_hub.testing.localhub",
        description="Serve a local Hugging Face Hub stand-in (API + git smart-HTTP).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--port", type=int, default=8765, help="port (0 picks a free one)")
    parser.add_argument(
        "--data", default=None, help="data directory (default: a temporary one, deleted on exit)"
    )
    return parser.parse_args(argv)


def banner(hub: LocalHub) -> str:
    """What to print once the server is up: endpoint, tokens, environment."""
    lines = [f"LocalHub serving on {hub.endpoint}", f"data directory: {hub.data_dir}", "tokens:"]
    for token, user in hub.tokens:
        orgs = f", orgs: {', '.join(user.orgs)}" if user.orgs else ""
        lines.append(f"  {token:<16} {user.name} ({user.role}{orgs})")
    default_token = hub.token_for(next(iter(hub.tokens))[1].name)
    lines += [
        "use it with:",
        f"  export HF_ENDPOINT={hub.endpoint}",
        f"  export HF_TOKEN={default_token}",
        "  export HF_HUB_DISABLE_TELEMETRY=1",
        "press Ctrl+C to stop",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    """Start LocalHub and serve until interrupted."""
    args = parse_args(argv)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with LocalHub(data_dir=args.data, host=args.host, port=args.port) as hub:
        print(banner(hub), flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
