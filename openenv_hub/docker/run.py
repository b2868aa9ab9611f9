"""Containers: what an image says of itself, the container to create, and a container run for a
check.

On an engine without a bridge network (``docker network ls`` shows only ``host`` and ``none``)
a container joins the host network and gets its port as ``PORT``: such engines ignore ``-p``
silently. Variables and secrets go through the Engine API, never a command line.

Layer: services.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from openenv_hub.docker.engine import require_engine
from openenv_hub.errors import DockerError, ImageNotFoundError, OpenEnvError
from openenv_hub.support.progress import SHORT_WAIT_S, report_progress
from openenv_hub.transport.local_ports import free_port, wait_for_health

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

__all__ = [
    "DEFAULT_PORT",
    "Network",
    "container_name",
    "create_container",
    "image_config",
    "image_port",
    "run_command",
    "run_container",
]

Network = Literal["auto", "host", "bridge"]
DEFAULT_PORT = 8000
LOG_LINES = 30
"""The last lines of a failed container's log that a check reports."""


def image_config(client: docker.DockerClient, image: str, *, pull: str) -> dict[str, Any]:
    """The image's configuration (its ``Env``, ``ExposedPorts``, ``Healthcheck``, ...);
    ``pull="missing"`` pulls an image the engine does not have.

    Raises:
        ImageNotFoundError: No such image, and it was not (or could not be) pulled.
    """
    import docker

    try:
        found = client.images.get(image)
    except docker.errors.ImageNotFound:
        if pull == "never":
            raise ImageNotFoundError(image) from None
        try:
            repository, tag = _split_tag(image)
            found = client.images.pull(repository, tag=tag)
        except docker.errors.APIError as exc:
            raise ImageNotFoundError(image, detail=str(exc.explanation or exc)[:300]) from None
    config: dict[str, Any] = found.attrs.get("Config") or {}
    return config


def _split_tag(image: str) -> tuple[str, str]:
    if "@" in image or ":" not in image.rsplit("/", 1)[-1]:
        return image, "latest"
    repository, _, tag = image.rpartition(":")
    return repository, tag


def image_port(config: Mapping[str, Any]) -> int:
    """The port the image's server listens on: its ``PORT`` variable, else its first exposed
    port, else 8000."""
    for item in config.get("Env") or []:
        key, _, value = str(item).partition("=")
        if key == "PORT" and value.isdigit():
            return int(value)
    for exposed in config.get("ExposedPorts") or {}:
        number = str(exposed).split("/", 1)[0]
        if number.isdigit():
            return int(number)
    return DEFAULT_PORT


def container_name(image: str) -> str:
    """A new container name for ``image``: ``openenv-<image's name>-<random>``."""
    base = image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0]
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in base)[:40]
    return f"openenv-{safe}-{uuid.uuid4().hex[:8]}"


def run_command(
    image: str,
    *,
    port: int,
    container_port: int,
    host_network: bool,
    env: Mapping[str, str],
    secret_names: list[str],
) -> str:
    """The ``docker run`` line equivalent to what was started (secret values left out)."""
    parts = ["docker run -d"]
    if host_network:
        parts.append(f"--network host -e PORT={port}")
    else:
        parts.append(f"-p 127.0.0.1:{port}:{container_port}")
    parts += [f"-e {key}={value}" for key, value in env.items() if key != "PORT"]
    parts += [f"-e {key} (secret)" for key in secret_names]
    parts.append(image)
    return " ".join(parts)


def create_container(
    client: docker.DockerClient,
    image: str,
    *,
    name: str,
    environment: dict[str, str],
    labels: dict[str, str],
    host_network: bool,
    ports: dict[str, tuple[str, int]],
    command: list[str] | None,
) -> Container:
    """Create (not start) a container of ``image`` on the host network or publishing ``ports``."""
    options: dict[str, Any] = {"network_mode": "host"} if host_network else {"ports": ports}
    container: Container = client.containers.create(
        image, command=command, name=name, environment=environment, labels=labels, **options
    )
    return container


@contextmanager
def run_container(
    tag: str,
    *,
    port: int | None = None,
    env: dict[str, str] | None = None,
    security_opts: Sequence[str] = (),
) -> Iterator[str]:
    """Run ``tag`` on the host network; yield its base URL once /health answers; remove it.

    ``security_opts`` are passed as ``--security-opt`` (e.g. ``seccomp=unconfined`` for an
    image that makes namespaces of its own).
    """
    cli = require_engine()
    port = port or free_port()
    command = [cli, "run", "-d", "--network", "host", "-e", f"PORT={port}"]
    for option in security_opts:
        command += ["--security-opt", option]
    for key, value in (env or {}).items():
        command += ["-e", f"{key}={value}"]
    started = subprocess.run([*command, tag], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        raise DockerError(f"docker run {tag} failed: {started.stderr.strip()[:500]}")
    container = started.stdout.strip()
    base_url = f"http://127.0.0.1:{port}"
    try:
        try:
            with report_progress(
                f"container of {tag}", "waiting for /health", show_after_s=SHORT_WAIT_S
            ) as progress:
                alive = _running(cli, container)
                wait_for_health(base_url, timeout_s=60, alive=alive, progress=progress)
        except OpenEnvError as exc:
            raise _not_serving(cli, container, tag, exc) from None
        yield base_url
    finally:
        subprocess.run([cli, "rm", "-f", container], capture_output=True, check=False)


def _running(cli: str, container: str, every_s: float = 1.0) -> Callable[[], bool]:
    """Whether the container still runs, asked of the engine at most every ``every_s``."""
    state = {"asked": 0.0, "running": True}

    def running() -> bool:
        if time.monotonic() - state["asked"] >= every_s:
            done = subprocess.run(
                [cli, "inspect", "-f", "{{.State.Running}}", container],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
            state["asked"], state["running"] = time.monotonic(), done.stdout.strip() != "false"
        return bool(state["running"])

    return running


def _not_serving(cli: str, container: str, tag: str, exc: OpenEnvError) -> DockerError:
    """Why the container did not serve: it exited (with its code), or /health stayed silent;
    the end of its log, and a hint that says where to look."""
    inspect = subprocess.run(
        [cli, "inspect", "-f", "{{.State.Running}} {{.State.ExitCode}}", container],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    running, _, code = inspect.stdout.strip().partition(" ")
    logs = subprocess.run([cli, "logs", container], capture_output=True, text=True, check=False)
    tail = (logs.stdout + logs.stderr).strip().splitlines()[-LOG_LINES:]
    what = (
        f"The container of {tag} exited (code {code}) before /health answered"
        if running == "false"
        else str(exc)
    )
    last = tail[-1] if tail else "(its log is empty)"
    return DockerError(
        f"{what}. Its log ends with:\n" + "\n".join(tail),
        hint=f"The last line of its log says why: {last[:200]}. Fix that, then validate again "
        f"(docker run {tag} shows the whole log).",
    )
