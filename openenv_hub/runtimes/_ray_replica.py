"""One replica of an environment server inside a Ray actor: uvicorn on the node's address.

:class:`ReplicaServer` is the actor's class (made remote by
:mod:`openenv_hub.runtimes.ray`); Ray imports this module on every node that runs a replica,
so it imports only what the server needs. The server listens on the node's Ray address (here
``127.0.0.x``), on a port the operating system picks, and runs in a thread of the actor's
process: killing that process kills the server, and Ray starts the actor again (a new port,
maybe on another node) up to its ``max_restarts``.
"""

from __future__ import annotations

import collections
import importlib
import logging
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReplicaServer", "ReplicaSpec"]

_LOG_LINES = 2000


@dataclass(frozen=True)
class ReplicaSpec:
    """What a replica serves and with what settings (the actor's one argument).

    ``secrets`` reach the server's environment like ``env``, and are never printed.
    """

    app: str
    index: int
    provider_name: str
    source: str
    owner_pid: int
    env_dir: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict, repr=False)  # never printed
    host: str | None = None
    startup_timeout_s: float = 60.0


class _Lines(logging.Handler):
    """Keeps the last lines logged in the replica, for ``provider.logs()``."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=_LOG_LINES)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


class ReplicaServer:
    """Serves ``spec.app`` with uvicorn in a thread, until the actor ends."""

    def __init__(self, spec: ReplicaSpec) -> None:
        import ray
        import uvicorn

        from openenv_hub.transport.uvicorn_serving import tune_collector, uvicorn_options

        self.spec = spec
        self.started_at = time.time()
        self.restarted = bool(ray.get_runtime_context().was_current_actor_reconstructed)
        self._lines = _Lines()
        for name in ("uvicorn.error", "openenv_hub"):
            logging.getLogger(name).addHandler(self._lines)
        os.environ.update(spec.env)
        os.environ.update(spec.secrets)
        if spec.env_dir and spec.env_dir not in sys.path:
            sys.path.insert(0, spec.env_dir)
        app = _import(spec.app)
        tune_collector()  # as every server process (see openenv_hub.transport.uvicorn_serving)
        self.host = spec.host or _node_ip()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((self.host, 0))
        self.port = int(listener.getsockname()[1])
        config = uvicorn.Config(app, log_level="info", access_log=False, **uvicorn_options(app=app))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [listener]}, daemon=True
        )
        self.thread.start()
        self._wait_started()
        note = " (restarted by Ray)" if self.restarted else ""
        self._lines.lines.append(
            f"replica {spec.index} serves {self.url} in pid {os.getpid()}{note}"
        )

    def _wait_started(self) -> None:
        deadline = time.monotonic() + self.spec.startup_timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(
                    f"{self.spec.app} did not start on {self.host}:{self.port}:\n" + self.logs(40)
                )
            time.sleep(0.02)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def info(self) -> dict[str, Any]:
        """Where this replica serves, and who started it."""
        return {
            "index": self.spec.index,
            "url": self.url,
            "pid": os.getpid(),
            "node_ip": _node_ip(),
            "restarted": self.restarted,
            "started_at": self.started_at,
            "provider": self.spec.provider_name,
            "source": self.spec.source,
            "owner_pid": self.spec.owner_pid,
        }

    def logs(self, tail_lines: int = 200) -> str:
        return "\n".join(list(self._lines.lines)[-tail_lines:])


def _node_ip() -> str:
    """This node's address in the cluster."""
    import ray

    util: Any = ray.util
    return str(util.get_node_ip_address())


def _import(app_path: str) -> Any:
    module, _, attribute = app_path.partition(":")
    return getattr(importlib.import_module(module), attribute or "app")
