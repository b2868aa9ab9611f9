"""The ``local`` runtime: a server in a child process, ``python -m uvicorn APP`` on a free port
of 127.0.0.1, until stopped.

It serves an environment folder with this interpreter (or ``python=``), and a Space at a
revision installed into that interpreter: its package is installed with ``pip install
git+...@REV`` (after consent) unless the interpreter has it from the same commit already, and
its app comes from the ``openenv.yaml`` the package ships, else is ``<package>.server.app:app``.

Example::

    with LocalProcessProvider.start("my_env.server.app:app", env_dir=Path("my_env")) as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import openenv_hub.runtimes.cleanup as cleanup
from openenv_hub.errors import ConnectError, ServerStartError
from openenv_hub.model.manifest import ManifestError, load_manifest
from openenv_hub.runtimes.base import ReplicaStatus, RuntimeBase, SpaceRef, StopsOnExit
from openenv_hub.runtimes.processes import forget_process, record_process
from openenv_hub.support.progress import SHORT_WAIT_S, report_progress
from openenv_hub.support.settings import environment
from openenv_hub.transport.local_ports import free_port, port_in_use, wait_for_health

if TYPE_CHECKING:
    from openenv_hub.discovery import EnvironmentInfo

# free_port, port_in_use and wait_for_health live in openenv_hub.transport.local_ports; named here as before
__all__ = [
    "LocalProcessProvider",
    "LocalRuntime",
    "free_port",
    "installed_app",
    "port_in_use",
    "serve_folder",
    "serve_space",
    "serving_here",
    "wait_for_health",
]


class LocalProcessProvider(StopsOnExit):
    """An environment server running as a child process of this one."""

    runtime = "local"

    def __init__(self, process: subprocess.Popen[bytes], base_url: str, log: IO[bytes]) -> None:
        self.process = process
        self._base_url = base_url
        self._log = log

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def base_urls(self) -> list[str]:
        return [self._base_url]

    @classmethod
    def start(
        cls,
        app: str,
        *,
        env_dir: Path | None = None,
        python: str | None = None,
        cwd: Path | None = None,
        host: str = "127.0.0.1",
        port: int | None = None,
        env: dict[str, str] | None = None,
        startup_timeout_s: float = 30.0,
        runtime: str | None = None,
    ) -> LocalProcessProvider:
        """Start ``app`` (an import string) with uvicorn and wait for /health.

        Args:
            app: The ASGI app, e.g. ``"echo_env.server.app:app"``.
            env_dir: A folder put on ``sys.path`` (an environment's source checkout).
            python: The interpreter to run (default: this one), e.g. another virtual env's.
            cwd: Working directory (default: ``env_dir``).
            runtime: The runtime named in messages (default ``"local"``; ``"uv"`` for uv's).

        Raises:
            ServerStartError: The server exited or did not answer ``/health`` in time.
        """
        port = port or free_port(host)
        command = [python or sys.executable, "-m", "uvicorn", app]
        if env_dir is not None:
            command += ["--app-dir", str(env_dir)]
        command += ["--host", host, "--port", str(port), "--log-level", "warning"]
        log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
        process = subprocess.Popen(
            command,
            cwd=cwd or env_dir,
            env={**environment(), **(env or {})},
            stdout=log,
            stderr=log,
        )
        server = cls(process, f"http://{host}:{port}", log)
        cleanup.track(server)
        name = runtime or cls.runtime
        record_process(process.pid, runtime=name, url=server.base_url, source=app)
        try:
            with report_progress(
                f"{app} ({name} runtime)", "waiting for /health", show_after_s=SHORT_WAIT_S
            ) as progress:
                wait_for_health(
                    server.base_url,
                    timeout_s=startup_timeout_s,
                    alive=server.running,
                    progress=progress,
                )
        except ConnectError as exc:
            logs = server.logs(40)
            server.stop()
            raise ServerStartError(
                f"{app} did not start: {exc}.",
                runtime=name,
                command=" ".join(command),
                logs=logs,
                url=server.base_url,
                hint="Read the log above; run the command above to debug it.",
            ) from None
        if runtime:
            server.runtime = runtime
        return server

    def running(self) -> bool:
        return self.process.poll() is None

    def replicas(self) -> list[ReplicaStatus]:
        state = "ALIVE" if self.running() else "DEAD"
        return [ReplicaStatus(0, self.runtime, state, self._base_url, self.process.pid, "", 0)]

    def stopped_from_outside(self) -> str | None:
        """How the server was stopped by another process (the signal that ended it), or None:
        it runs, or it ended on its own."""
        code = self.process.poll()
        if code is None or code >= 0:
            return None
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it got {name} from another process"

    def output(self) -> str:
        """What the server printed so far."""
        if self._log.closed:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def logs(self, tail_lines: int = 200) -> str:
        return "\n".join(self.output().splitlines()[-tail_lines:])

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout_s``); idempotent."""
        cleanup.untrack(self)
        forget_process(self.process.pid)
        if self.running():
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


@contextlib.contextmanager
def serving_here(url: str, *, source: str) -> Iterator[None]:
    """This process serves ``source`` at ``url`` (``openenv serve``'s local runtime runs uvicorn
    in its own process): recorded for ``openenv ps`` while the block runs, and ``openenv stop``
    sends it SIGTERM."""
    record_process(os.getpid(), runtime="local", url=url, source=source)
    try:
        yield
    finally:
        forget_process(os.getpid())


class LocalRuntime(RuntimeBase):
    """Folders and Spaces served by a child process of this one; see the module."""

    name = "local"
    summary = "a child process of this interpreter (or python=...)"
    inventory = "openenv_hub.runtimes.processes:ProcessInventory"
    options = {
        "folder": frozenset({"port", "env", "python", "startup_timeout_s"}),
        "space": frozenset({"python", "env", "startup_timeout_s"}),
    }

    def start_folder(self, path: Path, **options: Any) -> LocalProcessProvider:
        return serve_folder(path, **options)

    def start_space(self, space: SpaceRef, **options: Any) -> LocalProcessProvider:
        return serve_space(space, **options)


def serve_folder(
    path: Path,
    *,
    port: int | None = None,
    env: dict[str, str] | None = None,
    python: str | None = None,
    startup_timeout_s: float = 30.0,
) -> LocalProcessProvider:
    """Serve the environment folder ``path`` (the app and variables its manifest names)."""
    manifest = load_manifest(path)
    variables = {key: str(value) for key, value in manifest.variables.items()}
    return LocalProcessProvider.start(
        manifest.app_path,
        env_dir=path.resolve(),
        python=python,
        port=port,
        env={**variables, **(env or {})},
        startup_timeout_s=startup_timeout_s,
    )


def serve_space(
    space: SpaceRef,
    *,
    python: str | Path | None = None,
    env: dict[str, str] | None = None,
    startup_timeout_s: float = 60.0,
) -> LocalProcessProvider:
    """Install (or reuse) the Space's environment in ``python`` and serve it.

    Raises:
        RemoteCodeNotTrustedError: Installing needs consent (``trust_remote_code``).
        InstallError: pip failed, or the package declares no environment entry point.
    """
    from openenv_hub.hub import ensure_installed

    executable = str(python or sys.executable)
    installed = ensure_installed(
        space.repo_id, space.revision, python=executable, token=space.token,
        endpoint=space.endpoint, yes=space.trust_remote_code,
    )  # fmt: skip
    return LocalProcessProvider.start(
        installed_app(installed),
        python=executable,
        cwd=Path(executable).parent,  # holds no packages that could shadow the installed one
        env=env,
        startup_timeout_s=startup_timeout_s,
    )


def installed_app(env: EnvironmentInfo) -> str:
    """The ASGI app of an installed environment: its shipped manifest's, if that names one of
    its own package, else ``<package>.server.app:app``."""
    if env.manifest:
        try:
            app = load_manifest(Path(env.manifest)).app_path
        except ManifestError:
            app = ""
        if app.split(".")[0].split(":")[0] == env.package:
            return app
    return f"{env.package}.server.app:app"
