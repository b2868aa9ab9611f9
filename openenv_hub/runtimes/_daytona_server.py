"""One environment server in one Daytona sandbox, through the ``daytona`` SDK: started with the
toolbox (Daytona does not run an image's command), waited for through the sandbox's preview URL
with its token, and read when it fails (the sandbox's state, whether the server still runs, the
last lines of its log).

The server is started in the background by ``sandbox.process.exec``, its output going to
:data:`LOG` in the sandbox; secrets go as that command's environment (the request's body, never
its command line), so they reach the server's environment and nothing the API shows.

Layer: runtimes.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from openenv_hub.errors import ConfigurationError, DependencyNotInstalledError, ServerStartError
from openenv_hub.protocol.urls import is_loopback
from openenv_hub.support.progress import Progress

__all__ = [
    "LOG",
    "PREVIEW_TOKEN_HEADER",
    "ended",
    "image_command",
    "last_lines",
    "launch",
    "launch_line",
    "wait_healthy",
]

LOG = "/tmp/openenv-server.log"
PID = "/tmp/openenv-server.pid"
#: The header Daytona's preview proxy reads a private sandbox's token from.
PREVIEW_TOKEN_HEADER = "x-daytona-preview-token"
_CHECK_EVERY_S = 2.0


def image_command(image: str) -> tuple[list[str], str | None]:
    """The command of ``image`` (its entrypoint and command) and its working folder, read from
    the local Docker engine, which has the image.

    Raises:
        ConfigurationError: The engine does not have it, or it has no command: give
            ``command=``.
    """
    from openenv_hub.docker import docker_client, image_config

    try:
        config = image_config(docker_client(), image, pull="never")
    except (DependencyNotInstalledError, ServerStartError) as exc:
        raise ConfigurationError(
            f"The daytona runtime starts the server with the image's command, read from the "
            f"local Docker engine, which cannot tell it for {image} ({str(exc).splitlines()[0]}). "
            "Give it: command=['python', '-m', 'openenv_hub.server', 'my_env.server.app:app']."
        ) from None
    command = [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [])]
    if not command:
        raise ConfigurationError(
            f"{image} has no command; give the server's: command=['python', '-m', ...]."
        )
    return [str(part) for part in command], config.get("WorkingDir") or None


def launch_line(command: list[str]) -> str:
    """The shell line that starts ``command`` in the background, its output to :data:`LOG`."""
    return f"nohup {shlex.join(command)} > {LOG} 2>&1 & echo $! > {PID}"


def launch(
    sandbox: Any, command: list[str], *, secrets: Mapping[str, str], cwd: str | None
) -> None:
    """Start the server in ``sandbox`` (returns at once; :func:`wait_healthy` waits for it).

    Raises:
        ServerStartError: The toolbox could not run the line.
    """
    line = launch_line(command)
    result = sandbox.process.exec(line, cwd=cwd, env=dict(secrets) or None, timeout=30)
    if result.exit_code != 0:
        raise ServerStartError(
            f"Sandbox {sandbox.id} could not start the server (exit code {result.exit_code}).",
            runtime="daytona",
            command=line,
            logs=str(result.result or ""),
        )


def ended(sandbox: Any) -> str | None:
    """Why the server is not running (the sandbox stopped, or the server exited), or None."""
    sandbox.refresh_data()
    state = str(getattr(sandbox.state, "value", sandbox.state))
    if state != "started":
        reason = f": {sandbox.error_reason}" if sandbox.error_reason else ""
        return f"its sandbox is {state}{reason}"
    check = f"kill -0 $(cat {PID}) 2>/dev/null && echo running || echo ended"
    result = sandbox.process.exec(check, timeout=10)
    return "its server exited" if "ended" in str(result.result) else None


def last_lines(sandbox: Any, count: int) -> list[str]:
    """The last ``count`` lines of the server's log (none if the sandbox cannot say)."""
    try:
        result = sandbox.process.exec(f"tail -n {int(count)} {LOG} 2>/dev/null", timeout=10)
    except Exception:
        return []
    return str(result.result or "").splitlines()


def wait_healthy(
    sandbox: Any, url: str, token: str, *, timeout_s: float, progress: Progress,
    stopped: Callable[[], bool],
) -> str | None:  # fmt: skip
    """Poll ``url/health`` with the token until it answers 200; None then, else why not (the
    server ended, or the time ran out).

    Raises:
        ServerStartError: The preview proxy refused the token.
    """
    deadline = time.monotonic() + timeout_s
    next_check = time.monotonic() + _CHECK_EVERY_S
    local = is_loopback(url)
    headers = {PREVIEW_TOKEN_HEADER: token}
    with httpx.Client(headers=headers, timeout=5.0, trust_env=not local) as http:
        while time.monotonic() < deadline and not stopped():
            progress.update()
            try:
                status = http.get(f"{url}/health").status_code
            except httpx.HTTPError:
                status = None
            if status == 200:
                return None
            if status in (401, 403):
                raise ServerStartError(
                    f"The preview proxy refused the token of sandbox {sandbox.id} (HTTP {status}).",
                    runtime="daytona",
                    url=url,
                    hint="Check DAYTONA_API_KEY and DAYTONA_API_URL: the token comes from there.",
                )
            if time.monotonic() > next_check:
                why = ended(sandbox)
                if why:
                    return why
                next_check = time.monotonic() + _CHECK_EVERY_S
            time.sleep(0.2)
    return "was stopped" if stopped() else f"did not answer within {timeout_s:g} s"
