"""A real uvicorn server on 127.0.0.1 in a background thread, for tests."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    def __init__(
        self, app: Any, *, port: int | None = None, host: str = "127.0.0.1", **uvicorn_options: Any
    ) -> None:
        self.app = app
        self.port = port or free_port()
        from openenv_hub.server.app import uvicorn_options as defaults

        options = {"log_level": "warning", **defaults(app=app)}
        options.update(uvicorn_options)
        self.config = uvicorn.Config(app, host=host, port=self.port, **options)
        pool = getattr(getattr(app, "state", None), "sessions", None)
        if pool is not None:  # as serve_app tells it (the rule of who may watch)
            pool.bind_host = host
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(
            target=self.server.run, name=f"uvicorn-{self.port}", daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pool(self) -> Any:
        return self.app.state.sessions

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start on port {self.port}")
            time.sleep(0.01)
        ready = getattr(getattr(self.app, "state", None), "web_ui_ready", None)
        if ready is not None and not ready.wait(120):  # the UI is built after the start
            raise RuntimeError("the web UI was not built in 120 s")

    def wait_for(self, predicate: Any, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError("condition not met in time")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
