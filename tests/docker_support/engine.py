"""Helpers for tests that build and run real containers.

The engine is the private dockerd started by ``.ci/docker/setup.sh``: no bridge
network, so every build and container uses ``--network host`` and a server is
told its port through an environment variable (``PORT``), never ``-p``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

DEFAULT_STATE_DIR = "/var/lib/openenv-hub-ci/docker"
BASE_IMAGE = os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311")
SETUP_HINT = 'run `eval "$(.ci/docker/setup.sh)"` first'
# Build args Docker accepts without an ARG line; forwarded when set on the host.
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")


class DockerError(RuntimeError):
    """A docker CLI call failed; the message carries its output."""


def default_socket() -> Path:
    state = os.environ.get("OPENENV_DOCKER_STATE_DIR", DEFAULT_STATE_DIR)
    return Path(state) / "docker.sock"


_ANSWERING: set[str] = set()


def _answers(host: str) -> bool:
    """True if an engine answers at ``host`` (positive answers are cached)."""
    if host in _ANSWERING:
        return True
    if shutil.which("docker") is None:
        return False
    try:
        proc = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            env={**os.environ, "DOCKER_HOST": host},
            capture_output=True,
            timeout=15,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    if proc.returncode == 0:
        _ANSWERING.add(host)
    return proc.returncode == 0


def docker_host() -> str | None:
    """DOCKER_HOST to use: the env var if set, else setup.sh's socket if it answers."""
    env = os.environ.get("DOCKER_HOST")
    if env:
        return env
    sock = default_socket()
    host = f"unix://{sock}"
    if sock.exists() and _answers(host):
        return host
    return None


def require_docker() -> str:
    """Return the DOCKER_HOST, or skip the test (fail it when CI=true)."""
    host = docker_host()
    if shutil.which("docker") is None:
        reason = f"no docker CLI on PATH; {SETUP_HINT}"
    elif host is None:
        reason = (
            f"no Docker engine (DOCKER_HOST unset, {default_socket()} not answering); {SETUP_HINT}"
        )
    elif not _answers(host):
        reason = f"Docker engine at DOCKER_HOST={host} does not answer; {SETUP_HINT}"
    else:
        return host
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true requires a Docker engine: {reason}", pytrace=False)
    pytest.skip(reason)


def docker(
    *args: str, timeout: float = 120, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run the docker CLI against :func:`docker_host`; raise DockerError on failure."""
    env = dict(os.environ)
    host = docker_host()
    if host:
        env["DOCKER_HOST"] = host
    # The docker 28 CLI has no buildx here; the legacy builder is what works
    # against dockerd 20.10 (DOCKER_BUILDKIT=1 fails).
    env["DOCKER_BUILDKIT"] = "0"
    proc = subprocess.run(
        ["docker", *args], env=env, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise DockerError(
            f"docker {' '.join(args)} exited {proc.returncode}\n"
            f"--- stdout ---\n{proc.stdout[-8000:]}\n--- stderr ---\n{proc.stderr[-8000:]}"
        )
    return proc


def remove_images(*names: str) -> None:
    """Remove a test's own images, never the untagged parents under them.

    The legacy builder keeps each build step as an untagged parent image, shared by every
    build with the same first steps. ``docker rmi`` prunes those parents with the image, so a
    test cleaning up while another process's build is between two cached steps deletes the
    very layer that build is about to run on ("No such image: sha256:..."). The parents left
    here are removed, once nothing runs, by the sweep at the end of the run
    (:mod:`docker_support.image_sweep`).
    """
    if names:
        docker("rmi", "--force", "--no-prune", *names, check=False)


def build_image(
    context_dir: str | os.PathLike[str],
    tag: str,
    build_args: Mapping[str, str] | None = None,
    dockerfile: str | os.PathLike[str] | None = None,
    timeout: float = 900,
) -> str:
    """``docker build --network host``; returns the tag. BASE_IMAGE defaults to the test base."""
    args: dict[str, str] = {"BASE_IMAGE": BASE_IMAGE}
    args.update({k: os.environ[k] for k in _PROXY_VARS if os.environ.get(k)})
    args.update(build_args or {})
    cmd = ["build", "--network", "host", "--rm", "--force-rm", "-t", tag]
    for key, value in args.items():
        cmd += ["--build-arg", f"{key}={value}"]
    if dockerfile is not None:
        cmd += ["-f", str(dockerfile)]
    cmd.append(str(context_dir))
    docker(*cmd, timeout=timeout)
    return tag


@dataclass
class Container:
    id: str
    name: str
    image: str

    def logs(self) -> str:
        proc = docker("logs", self.id, check=False)
        return proc.stdout + proc.stderr

    def running(self) -> bool:
        proc = docker("inspect", "--format", "{{.State.Running}}", self.id, check=False)
        return proc.stdout.strip() == "true"

    def health(self) -> str:
        """Docker HEALTHCHECK status: starting/healthy/unhealthy, or '' without one."""
        proc = docker(
            "inspect",
            "--format",
            "{{if .State.Health}}{{.State.Health.Status}}{{end}}",
            self.id,
            check=False,
        )
        return proc.stdout.strip()

    def stop(self, timeout_s: int = 10) -> None:
        docker("stop", "-t", str(timeout_s), self.id, check=False, timeout=timeout_s + 30)

    def remove(self) -> None:
        """Stop and remove; safe to call twice."""
        self.stop()
        docker("rm", "-f", self.id, check=False)


def run_container(
    image: str,
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    extra_args: Sequence[str] = (),
) -> Container:
    """``docker run -d --network host``; the caller must ``remove()`` it (see cleanup)."""
    name = name or f"openenv-test-{uuid.uuid4().hex[:10]}"
    cmd = ["run", "-d", "--network", "host", "--name", name]
    for key, value in (env or {}).items():
        cmd += ["-e", f"{key}={value}"]
    cmd += [*extra_args, image]
    cid = docker(*cmd).stdout.strip()
    return Container(id=cid, name=name, image=image)


def cleanup(*containers: Container) -> None:
    for container in containers:
        container.remove()


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (containers share the host network)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout_s: float = 30, container: Container | None = None) -> int:
    """Poll ``url`` until it answers 2xx; return the status.

    With ``container``, give up early (with its logs) if it stops running.
    """
    deadline = time.monotonic() + timeout_s
    last: object = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if 200 <= resp.status < 300:
                    return int(resp.status)
                last = resp.status
        except (urllib.error.URLError, OSError) as exc:
            last = exc
        if container is not None and not container.running():
            raise DockerError(
                f"container {container.name} exited before {url} answered:\n{container.logs()}"
            )
        time.sleep(0.1)
    logs = f"\n{container.logs()}" if container is not None else ""
    raise TimeoutError(f"{url} did not answer 2xx within {timeout_s} s (last: {last!r}){logs}")


def listening_addresses(port: int) -> set[str]:
    """The local IPv4 addresses of sockets listening on ``port`` in this network namespace
    (the host's, which containers on the host network share)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        address, _, hex_port = fields[1].partition(":")
        if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
            found.add(".".join(str(byte) for byte in reversed(bytes.fromhex(address))))
    return found
