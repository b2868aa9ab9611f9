"""An environment's image: its build context staged, then ``docker build`` on the host network.

The build context holds what ``openenv push`` would upload (:func:`openenv_hub.hub.stage_files`:
no ``.env``, no secret-looking file, no link to outside the folder), never the folder itself,
plus this openenv-hub's wheel when it runs from a source checkout. The Docker CLI builds it with
the legacy builder (``DOCKER_BUILDKIT=0``), which engines without buildx need.

Layer: services.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub.docker.build_output import BuildOutput
from openenv_hub.docker.engine import require_engine
from openenv_hub.errors import DockerError
from openenv_hub.packaging import bundle_wheels
from openenv_hub.support.progress import Progress, report_progress
from openenv_hub.support.settings import environment

if TYPE_CHECKING:
    from openenv_hub.hub import FileSelection

__all__ = ["build_context", "build_image", "default_tag", "space_image_tag", "stage_context"]


def default_tag(name: str) -> str:
    """The tag ``openenv build`` gives the environment ``name``: ``openenv-NAME:latest``."""
    return f"openenv-{name.lower().replace('_', '-')}:latest"


def space_image_tag(repo_id: str, commit: str, *, prefix: str = "openenv-space") -> str:
    """The image built from the Space ``repo_id`` at ``commit``: one name per Space and commit.

    Docker names are lower case with few symbols, so the readable part alone would be the same
    for ``alice/my_env`` and ``alice-my/env`` (or ``Alice/env`` and ``alice/env``): a hash of
    the exact id follows it, and the tag is the full commit.

    Example:
        >>> space_image_tag("alice/my_env", "0" * 40)
        'openenv-space-alice-my-env-3130b422c07d:0000000000000000000000000000000000000000'
    """
    slug = "".join(c if c.isalnum() else "-" for c in repo_id.lower()).strip("-")
    digest = hashlib.sha256(repo_id.encode()).hexdigest()[:12]
    return f"{prefix}-{'-'.join(filter(None, slug.split('-')))}-{digest}:{commit}"


def stage_context(
    env_dir: Path,
    staging: Path,
    *,
    include_secrets: Sequence[str] = (),
    allow_hard_links: bool = False,
) -> FileSelection:
    """Copy what ``openenv push`` would upload of ``env_dir`` to ``staging`` (never touching
    ``env_dir``), with the bundled wheels; return what was selected and what was left out."""
    from openenv_hub.hub import stage_files

    selection = stage_files(
        env_dir, staging, include_secrets=include_secrets, allow_hard_links=allow_hard_links
    )
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
    allow_hard_links: bool = False,
) -> FileSelection:
    """``docker build`` of a staged copy of ``env_dir`` on the host network; returns the file
    selection the context was staged with (``skipped`` lists what the safety rules left out).

    ``include_secrets`` names secret-looking files to build in anyway (as ``openenv push
    --include-secret`` does); ``allow_hard_links`` builds in files with more than one hard
    link (as ``--allow-hard-links``).

    Raises:
        DockerError: No engine, or the build failed (the hint says why when it can tell).
    """
    cli = require_engine()
    with tempfile.TemporaryDirectory(prefix="openenv-build-") as tmp:
        context = Path(tmp) / "context"
        selection = stage_context(
            env_dir, context, include_secrets=include_secrets, allow_hard_links=allow_hard_links
        )
        command = [cli, "build", "--network", "host", "--force-rm", "-t", tag]
        args = ([f"BASE_IMAGE={base_image}"] if base_image else []) + list(build_args)
        for arg in args:
            command += ["--build-arg", arg]
        command += ["--no-cache"] if no_cache else []
        env = {**environment(), "DOCKER_BUILDKIT": "0"}
        output = BuildOutput(build_args=args)
        with _reported(tag, quiet=quiet) as progress:
            code = _run_build([*command, str(context)], env=env, output=output, progress=progress)
            if progress is not None and code != 0:
                progress.finish("failed", failed=True)
    if code != 0:
        raise _build_failed(env_dir, code, output, base_image, quiet=quiet)
    return selection


def _build_failed(
    env_dir: Path, code: int, output: BuildOutput, base_image: str | None, *, quiet: bool
) -> DockerError:
    """The step that failed first; then the end of its output, unless it was printed."""
    if quiet:
        where = output.failure()
    elif output.step:
        where = f"at step {output.step}."
    else:
        where = "(its output is above)."
    return DockerError(
        f"docker build of {env_dir} failed (exit {code}) {where}",
        hint=_build_hint(env_dir, output, base_image, quiet=quiet),
    )


def build_context(
    context: Path,
    tag: str,
    *,
    build_args: Sequence[str] = (),
    timeout_s: float = 600.0,
) -> None:
    """``docker build`` of the folder ``context`` as it is (no file selection, no wheels: a
    task's own image, whose author chose its files), on the host network, within
    ``timeout_s``; its output is kept, not printed.

    Raises:
        DockerError: No engine, the build failed (the message names the step and ends with its
            output), or it took longer than ``timeout_s``.
    """
    cli = require_engine()
    command = [cli, "build", "--network", "host", "--force-rm", "-t", tag]
    for arg in build_args:
        command += ["--build-arg", arg]
    env = {**environment(), "DOCKER_BUILDKIT": "0"}
    try:
        done = subprocess.run(
            [*command, str(context)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise DockerError(
            f"docker build of {context} took longer than {timeout_s:g} s.",
            hint="Raise the task's build_timeout_sec, or build the image once beforehand.",
        ) from None
    if done.returncode != 0:
        output = BuildOutput(build_args=build_args)
        for line in (done.stdout + done.stderr).splitlines(keepends=True):
            output.add(line)
        raise _build_failed(context, done.returncode, output, None, quiet=True)


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
    command: list[str],
    *,
    env: dict[str, str],
    output: BuildOutput,
    progress: Progress | None,
) -> int:
    """Run ``docker build``: its output is printed, or with ``progress`` (a quiet build) each
    line goes there, secrets hidden either way; ``output`` reads every line (to tell why it
    failed). Returns the build's exit code."""
    with subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            shown = output.add(line)
            if progress is None:
                print(shown, end="", flush=True)
            else:
                progress.line(shown)
    return process.returncode


def _build_hint(env_dir: Path, output: BuildOutput, base_image: str | None, *, quiet: bool) -> str:
    lowered = "\n".join(output.lines).lower()
    if output.instruction == "FROM" and any(sign in lowered for sign in _PULL_FAILURES):
        base = base_image or "python:3.11-slim"
        return (
            f"The engine could not pull the base image {base} (is a registry reachable?). "
            "Build from an image the engine has ('docker images' lists them): "
            "--base-image IMAGE, or set OPENENV_BASE_IMAGE."
        )
    if output.lost_an_image:
        return (
            "An image this build had made was removed while it ran (another process removed "
            "or pruned the engine's images meanwhile): build again."
        )
    if not quiet:
        return "Read the build output above."
    why = f" says why: {output.why}" if output.why else " may say why"
    return (
        f"The last line of its output{why}. Fix that, then build again "
        f"('openenv build {env_dir}' prints the whole output)."
    )
