"""Run the local Daytona in a background thread, for tests and offline use.

Layer: runtimes.
"""

from __future__ import annotations

import secrets
import socket
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

import uvicorn

from .app import LocalDaytonaApp, create_app
from .containers import SandboxContainers
from .records import TARGET
from .sandboxes import Sandboxes

__all__ = ["LocalDaytona"]


class LocalDaytona:
    """The part of Daytona's API that the ``daytona`` SDK needs to run environment servers,
    on ``127.0.0.1``, with sandboxes as containers on the local Docker engine (``DOCKER_HOST``).

    Args:
        api_key: The key clients send (``DAYTONA_API_KEY``); a new random one by default.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        minute_s: How long a minute of ``autoStopInterval`` lasts (tests shorten it).
        startup_timeout_s: How long :meth:`start` waits for the server.

    Example:
        >>> with LocalDaytona() as daytona:  # doctest: +SKIP
        ...     client = Daytona(DaytonaConfig(api_key=daytona.api_key, api_url=daytona.api_url))
    """

    def __init__(
        self, *, api_key: str | None = None, host: str = "127.0.0.1", port: int = 0,
        minute_s: float = 60.0, startup_timeout_s: float = 10.0,
    ) -> None:  # fmt: skip
        self.api_key = api_key or f"dtn_local_{secrets.token_hex(24)}"
        self.host = host
        self._requested_port = port
        self._minute_s = minute_s
        self._startup_timeout_s = startup_timeout_s
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.app: LocalDaytonaApp | None = None

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("The local Daytona is not running: call start() first.")
        return int(self._socket.getsockname()[1])

    @property
    def api_url(self) -> str:
        """What clients take as ``DAYTONA_API_URL``."""
        return f"http://{self.host}:{self.port}/api"

    @property
    def target(self) -> str:
        """The one target (region) of the service, ``DAYTONA_TARGET``."""
        return TARGET

    def environment(self) -> dict[str, str]:
        """The variables that point the SDK (and the ``daytona`` runtime) at this service."""
        return {
            "DAYTONA_API_URL": self.api_url,
            "DAYTONA_API_KEY": self.api_key,
            "DAYTONA_TARGET": self.target,
        }

    @property
    def sandboxes(self) -> Sandboxes:
        if self.app is None:
            raise RuntimeError("The local Daytona is not running: call start() first.")
        return self.app.sandboxes

    def start(self) -> LocalDaytona:
        """Bind the port, serve in a daemon thread, and return once ready.

        Raises:
            RuntimeError: Already started, or the server did not come up in time.
            DockerError: No Docker engine answers.
        """
        if self._server is not None:
            raise RuntimeError("The local Daytona is already running.")
        self._tmp = tempfile.TemporaryDirectory(prefix="localdaytona-")
        containers = SandboxContainers(Path(self._tmp.name) / "sandboxes")
        self.app = create_app(Sandboxes(containers, minute_s=self._minute_s), self.api_key)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind((self.host, self._requested_port))
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + self._startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"The local Daytona did not start on {self.host}.")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Stop serving, delete every sandbox, and remove the service's folder."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.app is not None:
            self.app.sandboxes.close()
        if self._socket is not None:
            self._socket.close()
        if self._tmp is not None:
            self._tmp.cleanup()
        self._server = self._thread = self._tmp = None

    def __enter__(self) -> LocalDaytona:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        self.stop()
