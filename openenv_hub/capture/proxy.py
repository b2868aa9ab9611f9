"""The capture proxy: an endpoint on 127.0.0.1 in front of a model engine, serving in a
background thread of the process that opens its sessions.

Example::

    from openenv_hub.capture import CaptureProxy

    with CaptureProxy(engine_url="http://127.0.0.1:8000/v1", model="tiny",
                      tokenizer="/models/tiny") as proxy:
        session = proxy.open_session()
        # the harness gets proxy.base_url and session.key as its endpoint and API key
        ...
        sequences = session.sequences()   # input_ids, loss_mask, logprobs
        report = session.report()         # report.ok: no fatal grade
        proxy.close_session(session)      # the key is revoked; the records stay readable

Layer: services.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import uvicorn

from openenv_hub.capture.app import ProxyLimits, create_proxy_app
from openenv_hub.capture.engine import EngineClient, load_aiohttp
from openenv_hub.capture.recorder import Recorder
from openenv_hub.capture.sessions import CaptureSession, SessionRegistry
from openenv_hub.capture.stitching import ChatTokenizer
from openenv_hub.errors import ConfigurationError
from openenv_hub.shown_urls import shown

__all__ = ["HOST", "CaptureProxy"]

#: The only address the proxy listens on.
HOST = "127.0.0.1"


class CaptureProxy:
    """A capture proxy, started with :meth:`start` (or ``with``), stopped with :meth:`stop`.

    Args:
        engine_url: The engine's OpenAI-compatible base URL, e.g. ``http://127.0.0.1:8000/v1``
            (never shown to a harness).
        model: The model name the engine serves.
        tokenizer: The folder (or Hub id) of the model's tokenizer and chat template, or a
            :class:`ChatTokenizer`: prompts that continue a call are then built from its ids.
            None lets the engine render every prompt from text, and a prefix break is graded
            fatal where it happens.
        engine_api_key: The engine's own key, if it needs one (never shown to a harness).
        sampling: Sampling parameters set on every call whatever the harness asks, e.g.
            ``{"temperature": 1.0, "top_p": 1.0}`` so the logprobs are the policy's.
        max_tokens_cap: The most tokens one call may sample (a harness may ask for more than
            the engine's context holds).
        port: The port to listen on (0: a free one).
        max_sessions: The most sessions open at once.
        max_calls_per_session: The most calls one session records (429 after).
        max_body_mb: The largest request body (413 after).
        max_messages_per_call: The most messages one call may hold, content blocks and input
            items counted (413 after).
        max_text_mb: The most text one call may hold, in millions of characters (413 after).
        max_connections: The most connections served at once; a request beyond gets 503.
        body_timeout_s: How long a request body may take to arrive (408 after).
        engine_timeout_s: How long one engine call may take (504 after).
    """

    def __init__(
        self,
        *,
        engine_url: str,
        model: str,
        tokenizer: str | os.PathLike[str] | ChatTokenizer | None = None,
        engine_api_key: str | None = None,
        sampling: dict[str, Any] | None = None,
        max_tokens_cap: int | None = None,
        port: int = 0,
        max_sessions: int = 1024,
        max_calls_per_session: int = 10_000,
        max_body_mb: float = 32.0,
        max_messages_per_call: int = 10_000,
        max_text_mb: float = 8.0,
        max_connections: int = 1024,
        body_timeout_s: float = 60.0,
        engine_timeout_s: float = 600.0,
    ) -> None:
        if not engine_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                "engine_url must be an http(s) URL such as http://127.0.0.1:8000/v1, not "
                f"{shown(engine_url)!r}"
            )
        load_aiohttp()  # fail here, not at the first call
        self.model = model
        self._engine_url = engine_url
        self._engine_api_key = engine_api_key
        self._engine_timeout_s = engine_timeout_s
        if tokenizer is None or isinstance(tokenizer, ChatTokenizer):
            self.tokenizer = tokenizer
        else:
            self.tokenizer = ChatTokenizer(tokenizer)
        self._sampling = dict(sampling or {})
        self._max_tokens_cap = max_tokens_cap
        self._requested_port = port
        self.registry = SessionRegistry(max_sessions=max_sessions, max_calls=max_calls_per_session)
        self.limits = ProxyLimits(
            int(max_body_mb * 1024 * 1024),
            body_timeout_s,
            max_messages=max_messages_per_call,
            max_text_chars=int(max_text_mb * 1024 * 1024),
        )
        self.max_connections = max_connections
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    def __repr__(self) -> str:
        return f"CaptureProxy({self.url if self.running else 'stopped'}, {len(self.registry)} sessions)"

    # -- sessions --------------------------------------------------------------------------

    def open_session(self) -> CaptureSession:
        """A new session for one rollout: give its :attr:`~CaptureSession.key` to the harness
        as its API key, and :attr:`base_url` as its endpoint."""
        return self.registry.open()

    def close_session(self, session: CaptureSession) -> None:
        """Revoke ``session``'s key (its records stay readable on the object)."""
        self.registry.close(session)

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.started

    @property
    def port(self) -> int:
        if self._socket is None:
            raise RuntimeError("the capture proxy is not started")
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``, what Anthropic clients take as their base URL."""
        return f"http://{HOST}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, what OpenAI clients take as their base URL."""
        return f"{self.url}/v1"

    def start(self, *, startup_timeout_s: float = 10.0) -> CaptureProxy:
        """Listen on 127.0.0.1 and serve in a daemon thread; returns when it answers."""
        if self._server is not None:
            raise RuntimeError("the capture proxy is already running")
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((HOST, self._requested_port))
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            access_log=False,  # an access log would show nothing secret, but nothing useful
            lifespan="on",
            timeout_keep_alive=30,
            limit_concurrency=self.max_connections,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + startup_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the capture proxy did not start on {HOST}")
            time.sleep(0.01)
        return self

    def _app(self) -> Any:
        recorder = Recorder(
            None, self.tokenizer, sampling=self._sampling, max_tokens_cap=self._max_tokens_cap
        )

        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[None]:
            # The engine's client lives in the server's event loop: made and closed there.
            recorder.engine = EngineClient(
                self._engine_url,
                self.model,
                api_key=self._engine_api_key,
                timeout_s=self._engine_timeout_s,
            )
            try:
                yield
            finally:
                await recorder.engine.aclose()

        app = create_proxy_app(self.registry, recorder, model_name=self.model, limits=self.limits)
        app.router.lifespan_context = lifespan
        return app

    def stop(self) -> None:
        """Stop serving (idempotent). Sessions and their records stay readable."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None

    def __enter__(self) -> CaptureProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
