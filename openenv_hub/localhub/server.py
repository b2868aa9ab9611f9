"""Run LocalHub in a background thread, for tests and local development.

Layer: runtimes.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import quote

import uvicorn

from openenv_hub.transport.uvicorn_serving import http_options

from .app import DEFAULT_MAX_UPLOAD_MB, LocalHubApp, create_app
from .auth import Role, TokenRegistry, User, generated_admin_token, token_registry
from .routes.control import RuntimeUpdate, set_likes, update_runtime
from .routes.deps import HubContext
from .storage import RepoKey


class LocalHub:
    """A Hub-compatible server on ``127.0.0.1``, like LocalStack for the Hugging Face Hub.

    Args:
        data_dir: Where repos are stored; a temporary directory (removed on
            :meth:`stop`) when None.
        tokens: ``token -> user`` (a :class:`User` or ``{"name", "orgs", "role"}``).
            Defaults to new random tokens of alice (member of org ``org``), bob, and alice
            read-only (:meth:`token_for` gives them); :data:`~.auth.DEMO_TOKENS` are the
            well-known ``hf_alice_write``, ``hf_bob_write`` and ``hf_alice_read``.
        admin_token: The token of the control routes under ``/_localhub`` (a new random one
            by default; :attr:`admin_token` gives it).
        max_upload_mb: The largest upload (a commit, a ``git push``, a request to a Space's
            app); bigger ones get 413 before they are read. They go to disk as they arrive.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        startup_timeout_s: How long :meth:`start` waits for the server.
        run_spaces: Build and run Docker Spaces after each push, as the Hub does, and serve
            their apps (HTTP and WebSocket) at the URL ``space_info().host`` gives. Needs a
            Docker engine; without one the runtime stays off and app URLs say why.
        space_build_args: Build arguments of Space images, e.g. ``{"BASE_IMAGE": ...}``
            where no registry is reachable.
        space_wheelhouse: A folder of wheels, the packages Space builds may install: builds
            have no network (a Space's Dockerfile is its author's code).
        run_jobs: Run Jobs (``HfApi.run_job``) as containers on the Docker engine (a Space's
            image built as for ``run_spaces``) and serve their exposed ports at the
            ``exposeUrls`` the API gives, checking the token for ports that are not public.

    Example:
        >>> with LocalHub() as hub:  # doctest: +SKIP
        ...     api = HfApi(endpoint=hub.endpoint, token=hub.token_for("alice"))
        ...     api.create_repo("alice/demo", repo_type="space", space_sdk="docker")
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        tokens: Mapping[str, User | Mapping[str, Any]] | TokenRegistry | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        admin_token: str | None = None,
        max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB,
        startup_timeout_s: float = 10.0,
        run_spaces: bool = False,
        space_build_args: Mapping[str, str] | None = None,
        space_wheelhouse: str | Path | None = None,
        run_jobs: bool = False,
    ) -> None:
        self.host = host
        self._requested_port = port
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.tokens = token_registry(tokens)
        self.admin_token = admin_token or generated_admin_token()
        """The token of the control routes: ``Authorization: Bearer <admin_token>``."""
        self._max_upload_mb = max_upload_mb
        self._startup_timeout_s = startup_timeout_s
        self._run_spaces = run_spaces
        self._space_build_args = dict(space_build_args or {})
        self._space_wheelhouse = space_wheelhouse
        self._run_jobs = run_jobs
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._app: LocalHubApp | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> LocalHub:
        """Bind the port, start serving in a daemon thread, and wait until ready.

        Raises:
            RuntimeError: If already started or the server does not come up in time.
            OSError: If the port cannot be bound.
        """
        if self._server is not None:
            raise RuntimeError("LocalHub is already running")
        self._socket = _bind(self.host, self._requested_port)
        if self._data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="localhub-")
        self._app = create_app(
            self.data_dir,
            self.tokens,
            admin_token=self.admin_token,
            max_upload_mb=self._max_upload_mb,
            run_spaces=self._run_spaces,
            space_build_args=self._space_build_args,
            space_wheelhouse=self._space_wheelhouse,
            run_jobs=self._run_jobs,
        )
        config = uvicorn.Config(
            self._app,
            log_level="warning",
            lifespan="on",  # the app closes its proxy's connections at shutdown
            timeout_keep_alive=30,
            timeout_graceful_shutdown=2,
            date_header=False,  # the app dates each response itself (see app._dated)
            **http_options(),  # requests' heads bounded; X-Forwarded-For not trusted
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        self._wait_until_started()
        return self

    def _wait_until_started(self) -> None:
        deadline = time.monotonic() + self._startup_timeout_s
        while not (self._server and self._server.started):
            if self._thread is None or not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"LocalHub did not start on {self.host}")
            time.sleep(0.01)

    def stop(self) -> None:
        """Stop serving and remove the temporary data directory, if one was made."""
        if self._app is not None:
            self._app.closing = True
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._app is not None and self._app.context.spaces is not None:
            self._app.context.spaces.close()
        if self._app is not None and self._app.context.jobs is not None:
            self._app.context.jobs.close()
        if self._socket is not None:
            self._socket.close()
        if self._tmp is not None:
            self._tmp.cleanup()
        self._server = self._thread = self._socket = self._tmp = None

    def __enter__(self) -> LocalHub:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses and credentials -------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the server thread is serving."""
        return self._server is not None and self._server.started

    @property
    def port(self) -> int:
        """The bound port (known once started, or when fixed in the constructor)."""
        if self._socket is not None:
            return int(self._socket.getsockname()[1])
        if self._requested_port:
            return self._requested_port
        raise RuntimeError("The port is chosen on start(); call start() first")

    @property
    def endpoint(self) -> str:
        """Base URL to use as ``HF_ENDPOINT``, e.g. ``http://127.0.0.1:8765``."""
        return f"http://{self.host}:{self.port}"

    @property
    def data_dir(self) -> Path:
        """Directory holding the repos."""
        if self._data_dir is not None:
            return self._data_dir
        if self._tmp is None:
            raise RuntimeError("The temporary data directory is created on start()")
        return Path(self._tmp.name)

    def token_for(self, user: str, role: Role = "write") -> str:
        """A token of ``user``, preferring one with ``role``.

        Raises:
            KeyError: If ``user`` has no token.
        """
        return self.tokens.token_for(user, role)

    def url(self, repo_id: str, repo_type: str = "space") -> str:
        """Web URL of a repo, e.g. ``http://127.0.0.1:PORT/spaces/alice/demo``."""
        return f"{self.endpoint}/{RepoKey.parse(repo_type, repo_id).web_path}"

    def git_url(self, repo_id: str, repo_type: str = "space", token: str | None = None) -> str:
        """Clone URL of a repo; with ``token``, credentials are embedded (``user:token@``).

        Example:
            ``pip install "git+{hub.git_url('alice/demo', token=t)}@v1"``
        """
        path = RepoKey.parse(repo_type, repo_id).web_path
        if token is None:
            return f"{self.endpoint}/{path}"
        user = self.tokens.user_for(token)
        username = quote(user.name if user else "user", safe="")
        return f"http://{username}:{quote(token, safe='')}@{self.host}:{self.port}/{path}"

    @property
    def space_runtime(self) -> dict[str, Any]:
        """Whether Docker Spaces are built and run here, and if not, why."""
        spaces = self._context().spaces
        if spaces is None:
            return {"enabled": False, "reason": "off (run_spaces=False)"}
        return spaces.describe()

    @property
    def runs_jobs(self) -> bool:
        """Whether Jobs (``HfApi.run_job``) run here, as containers on the Docker engine."""
        return self._context().jobs is not None

    # -- test helpers -------------------------------------------------------------------

    def requests(self) -> list[dict[str, Any]]:
        """Every request served so far (method, host, path, status, user...)."""
        return self._context().log.entries()

    def clear_requests(self) -> None:
        """Forget the request log."""
        self._context().log.clear()

    def set_space_runtime(
        self,
        repo_id: str,
        *,
        stage: str | None = None,
        then: list[str] | None = None,
        hardware: str | None = None,
        host: str | None = None,
        error_message: str | None = None,
    ) -> dict[str, Any]:
        """Script a Space's runtime; see :class:`~.routes.control.RuntimeUpdate`.

        Example:
            ``hub.set_space_runtime("alice/demo", stage="BUILDING", then=["RUNNING"])``
            makes the next ``get_space_runtime`` report BUILDING, and later ones RUNNING.
        """
        update = RuntimeUpdate(
            stage=stage, then=then, hardware=hardware, host=host, errorMessage=error_message
        )
        return update_runtime(self._context().store, RepoKey.parse("space", repo_id), update)

    def set_likes(self, repo_id: str, likes: int, repo_type: str = "space") -> int:
        """Make ``likes`` users like a repo (listings report it and sort on it).

        The Hub lets no script like a repo, so this exists only here.
        """
        return set_likes(self._context().store, RepoKey.parse(repo_type, repo_id), likes)

    def _context(self) -> HubContext:
        if self._app is None:
            raise RuntimeError("LocalHub is not started")
        return self._app.context

    def __repr__(self) -> str:
        state = f"http://{self.host}:{self.port}" if self.running else "stopped"
        return f"LocalHub({state})"


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock
