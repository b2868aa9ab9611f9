"""Root test configuration.

The Hugging Face variables are set here, before anything imports huggingface_hub, so no test
can reach huggingface.co.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")  # replaced by the local_hub fixture
os.environ.setdefault("HF_HOME", tempfile.mkdtemp(prefix="openenv-hf-home-"))
os.environ["GIT_TERMINAL_PROMPT"] = "0"

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from serving import ServerThread

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def serve() -> Iterator[Callable[..., ServerThread]]:
    """Serve an ASGI app with a real uvicorn on 127.0.0.1; returns the running server."""
    servers: list[ServerThread] = []

    def start(app: object, **options: object) -> ServerThread:
        server = ServerThread(app, **options)  # type: ignore[arg-type]
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def echo_server(serve: Callable[..., ServerThread]) -> ServerThread:
    from echo_env.server.app import app

    return serve(app)
