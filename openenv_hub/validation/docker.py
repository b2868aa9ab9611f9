"""The Space image: stage a build context, build it with the Docker CLI, run it, check it.

The build context holds what ``openenv push`` would upload (:func:`openenv_hub.hub.stage_files`:
no ``.env``, no secret-looking file, no link to outside the folder), never the folder itself.
Containers always use the host network (``--network host``) and get their port from the
``PORT`` variable: engines without a bridge network ignore ``-p`` silently.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from openenv_hub.errors import DockerError, OpenEnvError
from openenv_hub.hub import FileSelection, stage_files
from openenv_hub.packaging import bundle_wheels
from openenv_hub.progress import Progress, report_progress
from openenv_hub.providers.local import free_port, wait_for_health
from openenv_hub.validation.result import CheckResult
from openenv_hub.validation.runtime import runtime_checks
from openenv_hub.validation.target import EnvTarget

__all__ = [
    "DockerError",
    "build_image",
    "default_tag",
    "docker_checks",
    "require_engine",
    "run_container",
    "stage_context",
]

LOG_LINES = 30
"""The last lines of a failed container's log that a check reports."""


def require_engine() -> str:
    """The docker CLI's path, once an engine answers it; else a :class:`DockerError`."""
    cli = shutil.which("docker")
    if cli is None:
        raise DockerError(
            "The docker command is not installed.",
            hint="Install Docker (e.g. 'apt-get install docker.io'), then run the command again.",
        )
    done = subprocess.run(
        [cli, "version", "--format", "{{.Server.Version}}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if done.returncode != 0:
        host = os.environ.get("DOCKER_HOST", "the default socket /var/run/docker.sock")
        raise DockerError(
            f"No Docker engine answers at {host}: {done.stderr.strip()[:300]}",
            hint="Start one, or point DOCKER_HOST at a running engine, "
            "e.g. export DOCKER_HOST=unix:///path/to/docker.sock",
        )
    return cli


def default_tag(name: str) -> str:
    return f"openenv-{name.lower().replace('_', '-')}:latest"


def stage_context(
    env_dir: Path, staging: Path, *, include_secrets: Sequence[str] = ()
) -> FileSelection:
    """Copy what ``openenv push`` would upload of ``env_dir`` to ``staging`` (never touching
    ``env_dir``), with the bundled wheels; return what was selected and what was left out."""
    selection = stage_files(env_dir, staging, include_secrets=include_secrets)
    bundle_wheels(staging)
    return selection


def build_image(
    env_dir: Path,
    tag: str,
    *,
    base_image: str | None = None,
    build_args: Sequence[str] = (),
    no_cache: bool = False,
    quiet: bool = False,
    include_secrets: Sequence[str] = (),
) -> FileSelection:
    """``docker build`` of a staged copy of ``env_dir`` on the host network; returns the file
    selection the context was staged with (``skipped`` lists what the safety rules left out).

    ``include_secrets`` names secret-looking files to build in anyway (as ``openenv push
    --include-secret`` does).
    """
    import tempfile

    cli = require_engine()
    with tempfile.TemporaryDirectory(prefix="openenv-build-") as tmp:
        context = Path(tmp) / "context"
        selection = stage_context(env_dir, context, include_secrets=include_secrets)
        command = [cli, "build", "--network", "host", "-t", tag]
        args = ([f"BASE_IMAGE={base_image}"] if base_image else []) + list(build_args)
        for arg in args:
            command += ["--build-arg", arg]
        command += ["--no-cache"] if no_cache else []
        env = {**os.environ, "DOCKER_BUILDKIT": "0"}
        with _reported(tag, quiet=quiet) as progress:
            code, tail = _run_build([*command, str(context)], env=env, progress=progress)
            if progress is not None and code != 0:
                progress.finish("failed", failed=True)
    if code != 0:
        shown = f"\n{tail[-3000:]}" if quiet else ""
        raise DockerError(
            f"docker build of {env_dir} failed (exit {code}).{shown}",
            hint=_build_hint(tail, base_image),
        )
    return selection


_PULL_FAILURES = (
    "pull access denied",
    "manifest unknown",
    "failed to resolve",
    "no such host",
    "temporary failure in name resolution",
    "dial tcp",
    "tls handshake timeout",
    "i/o timeout",
    "connection refused",
    "network is unreachable",
    "error pulling image",
)


@contextmanager
def _reported(tag: str, *, quiet: bool) -> Iterator[Progress | None]:
    """A quiet build reports its progress (the lines it does not print)."""
    if not quiet:
        yield None
        return
    with report_progress(f"docker build {tag}", "building the image") as progress:
        yield progress


def _run_build(
    command: list[str], *, env: dict[str, str], progress: Progress | None
) -> tuple[int, str]:
    """Run ``docker build``: its output is printed, or with ``progress`` (a quiet build) each
    line goes there; return its code and output tail (kept either way, to tell why it
    failed)."""
    tail: list[str] = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if progress is None:
                print(line, end="", flush=True)
            else:
                progress.line(line)
            tail = [*tail[-200:], line]
    return process.returncode, "".join(tail)


def _build_hint(output: str, base_image: str | None) -> str:
    steps = re.findall(r"^Step \d+/\d+ : (\w+)", output, re.M)
    at_from = bool(steps) and steps[-1].upper() == "FROM"
    lowered = output.lower()
    if at_from and any(sign in lowered for sign in _PULL_FAILURES):
        base = base_image or "python:3.11-slim"
        return (
            f"The engine could not pull the base image {base} (is a registry reachable?). "
            "Build from an image the engine has ('docker images' lists them): "
            "--base-image IMAGE, or set OPENENV_BASE_IMAGE."
        )
    return "Read the build output above."


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
            wait_for_health(base_url, timeout_s=60, alive=_running(cli, container))
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


def docker_checks(
    target: EnvTarget,
    *,
    base_image: str | None = None,
    build_args: Sequence[str] = (),
    security_opts: Sequence[str] = (),
) -> list[CheckResult]:
    """Build the image, run it, and run the runtime checks against the container."""
    tag = default_tag(target.name)
    try:
        build_image(target.path, tag, base_image=base_image, build_args=build_args, quiet=True)
    except DockerError as exc:
        return [CheckResult("docker_build", False, str(exc), exc.hint, level="docker")]
    results = [CheckResult("docker_build", True, f"built {tag}", level="docker")]
    try:
        with run_container(tag, security_opts=security_opts) as base_url:
            results.append(
                CheckResult("docker_run", True, f"{tag} healthy at {base_url}", level="docker")
            )
            results += runtime_checks(base_url, level="docker")
    except DockerError as exc:
        results.append(CheckResult("docker_run", False, str(exc), exc.hint, level="docker"))
    return results
