"""The ``docker`` level of ``openenv validate``: build the Space image, run it, check it.

Building and running live in :mod:`openenv_hub.docker`; the names this module used to define
(``build_image``, ``default_tag``, ``require_engine``, ``run_container``, ``stage_context``) are
still importable from here.

Layer: client.
"""

from __future__ import annotations

from collections.abc import Sequence

from openenv_hub.checks.result import CheckResult
from openenv_hub.checks.target import EnvTarget
from openenv_hub.docker import (
    build_image,
    default_tag,
    require_engine,
    run_container,
    stage_context,
)
from openenv_hub.errors import DockerError
from openenv_hub.validation.runtime import runtime_checks

__all__ = [
    "DockerError",
    "build_image",
    "default_tag",
    "docker_checks",
    "require_engine",
    "run_container",
    "stage_context",
]


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
