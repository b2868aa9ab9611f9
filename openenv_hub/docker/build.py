"""An environment's image: its build context staged, then ``docker build`` on the host network.

The build context holds what ``openenv push`` would upload (:func:`openenv_hub.hub.stage_files`:
no ``.env``, no secret-looking file, no link to outside the folder), never the folder itself,
plus this openenv-hub's wheel when it runs from a source checkout. The Docker CLI builds it with
the legacy builder (``DOCKER_BUILDKIT=0``), which engines without buildx need.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub.docker.engine import require_engine
from openenv_hub.errors import DockerError
from openenv_hub.packaging import bundle_wheels

if TYPE_CHECKING:
    from openenv_hub.hub import FileSelection

__all__ = ["build_image", "default_tag", "stage_context"]


def default_tag(name: str) -> str:
    """The tag ``openenv build`` gives the environment ``name``: ``openenv-NAME:latest``."""
    return f"openenv-{name.lower().replace('_', '-')}:latest"


def stage_context(
    env_dir: Path, staging: Path, *, include_secrets: Sequence[str] = ()
) -> FileSelection:
    """Copy what ``openenv push`` would upload of ``env_dir`` to ``staging`` (never touching
    ``env_dir``), with the bundled wheels; return what was selected and what was left out."""
    from openenv_hub.hub import stage_files

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

    Raises:
        DockerError: No engine, or the build failed (the hint says why when it can tell).
    """
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
        code, tail = _run_build([*command, str(context)], env=env, quiet=quiet)
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


def _run_build(command: list[str], *, env: dict[str, str], quiet: bool) -> tuple[int, str]:
    """Run ``docker build``, showing its output unless ``quiet``; return its code and output
    tail (kept either way, to tell why it failed)."""
    tail: list[str] = []
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if not quiet:
                print(line, end="", flush=True)
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
