"""Fixtures for the web UI tests: real uvicorn servers and a real chromium driven by Playwright."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("OPENENV_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


# gradio's queue builds a pandas frame after every event using options pandas 3 deprecates;
# the servers run inside the test process, where such a warning would fail the request.
_IGNORED_WARNINGS = [
    "ignore:'future.no_silent_downcasting' is deprecated",
    "ignore:The copy keyword is deprecated",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            for spec in _IGNORED_WARNINGS:
                item.add_marker(pytest.mark.filterwarnings(spec))


@dataclass
class Served:
    """An app running on a real uvicorn server."""

    app: Any
    base_url: str

    @property
    def pool(self) -> Any:
        return self.app.state.sessions

    @property
    def web_url(self) -> str:
        return f"{self.base_url}/web/"

    def wait_sessions(self, count: int, timeout_s: float = 5.0) -> None:
        """Wait until the pool holds ``count`` sessions (fail after ``timeout_s``)."""
        deadline = time.monotonic() + timeout_s
        while self.pool.active_sessions != count:
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"expected {count} sessions, found {self.pool.active_sessions}"
                )
            time.sleep(0.05)


class _Server:
    def __init__(self, app: Any) -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        pool = getattr(getattr(app, "state", None), "sessions", None)
        if pool is not None:  # as serve_app tells it (the rule of who may watch)
            pool.bind_host = "127.0.0.1"
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[[Any], Served]]:
    """Factory: ``serve(app)`` runs ``app`` on 127.0.0.1 and a free port until the test ends."""
    servers: list[_Server] = []

    def start(app: Any) -> Served:
        server = _Server(app)
        server.start()
        servers.append(server)
        ready = getattr(app.state, "web_ui_ready", None)  # the UI is built after the start
        assert ready is None or ready.wait(120), "the web UI was not built in 120 s"
        return Served(app=app, base_url=f"http://127.0.0.1:{server.port}")

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's chromium, headless, driven by Playwright.

    One per test module: Playwright's sync API keeps an event loop marked as running in this
    thread while it lives, which would break any asyncio test that runs after it.
    """
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: install it with `apt-get install -y chromium` "
            "(or point OPENENV_CHROMIUM at a chromium binary)"
        )
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait for a page up to 15 s instead of 5: with the suite in two processes a
    # first load can take longer, and a passing assertion returns as soon as it holds.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """Factory: ``new_page()`` opens a page in a fresh browser context (its own cookies)."""
    contexts: list[Any] = []

    def open_page(**options: Any) -> Any:
        options.setdefault("viewport", {"width": 1360, "height": 1000})
        context = browser.new_context(**options)
        context.set_default_timeout(20_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()
