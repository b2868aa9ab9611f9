"""Root test configuration.

The suite opts into the LocalHub plugin (``openenv_hub.testing``; installing openenv-hub loads
it nowhere by itself): here, and with ``-p openenv_hub.testing`` in pyproject.toml's addopts, so
it loads before this file. It points HF_ENDPOINT, HF_HOME and the other Hugging Face variables
at a local Hub before anything imports huggingface_hub, so no test can reach huggingface.co.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# pytest-xdist's workers start with COLUMNS and LINES set (80x24); a rich console made at import
# with both set keeps that size for good, whatever a test sets later (the `cli` fixture: 250).
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

from serving import ServerThread

# cli_runner: the `cli` fixture, which runs the `openenv` command in-process.
# ray_support: the `ray_cluster` fixture, a two-node Ray cluster on loopback.
# source_tree_guard: fails a test that leaves a remembered Space in envs/NAME or spaces/NAME.
# docker_support.image_sweep: removes the images a run built on the private Docker engine.
# engine_support.fixtures: `vllm`, a real engine serving a tiny model fine-tuned on the spot.
pytest_plugins = [
    "openenv_hub.testing",
    "cli_runner",
    "ray_support",
    "source_tree_guard",
    "docker_support.image_sweep",
    "engine_support.fixtures",
]

REPO = Path(__file__).resolve().parents[1]

#: The time limit of a test that uses the Docker engine, unless it sets its own (the suite's is
#: 300 s): a cold build of the echo environment's image took 250-300 s, and a Job's Space build
#: ran past 300 s, on a 2-core machine with a load average of 17.
DOCKER_TEST_TIMEOUT_S = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("docker") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(DOCKER_TEST_TIMEOUT_S))


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
