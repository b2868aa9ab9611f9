"""Run the local Daytona by hand: ``python -m openenv_hub.localdaytona --port 3986``.

It prints the variables that point the ``daytona`` SDK at it (``DAYTONA_API_URL``,
``DAYTONA_TARGET``) and its API key: a new random one each start, or the value of
``$OPENENV_LOCALDAYTONA_API_KEY`` (then not printed), never a command-line option that ``ps``
would show. Sandboxes run on the Docker engine at ``DOCKER_HOST``; all are deleted when it
stops (Ctrl-C or SIGTERM).

Layer: runtimes.
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Sequence

from openenv_hub.support.settings import LOCALDAYTONA_API_KEY_VARIABLE, named_variable

from .server import LocalDaytona

API_KEY_VARIABLE = LOCALDAYTONA_API_KEY_VARIABLE


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m openenv_hub.localdaytona",
        description="Serve a local stand-in for Daytona's API, sandboxes on the Docker engine.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind")
    parser.add_argument("--port", type=int, default=3986, help="port (0 picks a free one)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_args(argv)
    given_key = named_variable(API_KEY_VARIABLE)
    daytona = LocalDaytona(api_key=given_key, host=options.host, port=options.port).start()
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    print(f"export DAYTONA_API_URL={daytona.api_url}", flush=True)
    print(f"export DAYTONA_TARGET={daytona.target}", flush=True)
    if given_key:
        print(f"export DAYTONA_API_KEY=... (the value of ${API_KEY_VARIABLE})", flush=True)
    else:
        print(f"export DAYTONA_API_KEY={daytona.api_key}", flush=True)
    print("Press Ctrl+C to stop (every sandbox is deleted).", flush=True)
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        daytona.stop()


if __name__ == "__main__":
    main()
