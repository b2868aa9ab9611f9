"""``openenv validate``: small checks, each returning a :class:`CheckResult`.

Levels add up: ``static`` reads files, ``import`` imports the app and its classes, ``runtime``
serves the app in a child process and talks to it, ``docker`` builds and runs the Space image.
A URL is checked with the runtime checks only.

Example:
    >>> from pathlib import Path
    >>> results = validate_path(Path("envs/echo_env"), level="static")  # doctest: +SKIP
    >>> passed(results)  # doctest: +SKIP
    True

Layer: client.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openenv_hub.checks.result import CheckResult, passed, report, report_json, run_checks

__all__ = [
    "LEVELS",
    "CheckResult",
    "passed",
    "report",
    "report_json",
    "validate_path",
    "validate_url",
]

LEVELS = ("static", "import", "runtime", "docker")


def validate_url(
    url: str, *, timeout_s: float = 10.0, total_timeout_s: float | None = None
) -> list[CheckResult]:
    """The runtime checks against a running server (one of ours, or an OpenEnv one).

    Each check gets ``timeout_s`` in total, however the server trickles its answers, and the
    whole validation ``total_timeout_s`` (default six times ``timeout_s``).
    """
    from openenv_hub.validation.runtime import runtime_checks

    return runtime_checks(url, timeout_s=timeout_s, total_timeout_s=total_timeout_s)


def validate_path(
    path: Path,
    *,
    level: str = "runtime",
    base_image: str | None = None,
    build_args: Sequence[str] = (),
    security_opts: Sequence[str] = (),
) -> list[CheckResult]:
    """Checks of an environment folder up to ``level``; stops at the first level that fails.

    ``security_opts`` are ``docker run --security-opt`` values for ``level="docker"``. An app
    Space (``kind: app``) has static checks only.
    """
    from openenv_hub.checks.static import static_checks
    from openenv_hub.checks.target import EnvTarget

    target = EnvTarget.load(path)
    results = run_checks(static_checks(target), target, level="static")
    wanted = LEVELS[: LEVELS.index(level) + 1]
    for next_level in wanted[1:]:
        if target.manifest is not None and not target.manifest.is_environment:
            reason = "an app Space (kind: app) serves no environment; run it and open it"
            results.append(CheckResult.skip(f"{next_level}_checks", reason, level=next_level))
            break
        if not passed(results):
            results.append(
                CheckResult.skip(f"{next_level}_checks", "earlier checks failed", level=next_level)
            )
            break
        results += _level(
            next_level,
            target,
            base_image=base_image,
            build_args=build_args,
            security_opts=security_opts,
        )
    return results


def _level(level: str, target: object, **docker: object) -> list[CheckResult]:
    from openenv_hub.checks.target import EnvTarget

    assert isinstance(target, EnvTarget) and target.manifest is not None
    if level == "import":
        from openenv_hub.validation.imports import import_checks

        return import_checks(target)
    if level == "runtime":
        return _runtime(target)
    from openenv_hub.validation.docker import docker_checks

    return docker_checks(target, **docker)  # type: ignore[arg-type]


def _runtime(target: object) -> list[CheckResult]:
    from openenv_hub.checks.target import EnvTarget
    from openenv_hub.errors import ConnectError
    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.validation.runtime import runtime_checks
    from openenv_hub.validation.tasks import taskset_checks

    assert isinstance(target, EnvTarget) and target.manifest is not None
    try:
        server = LocalProcessProvider.start(target.manifest.app_path, env_dir=target.path.resolve())
    except ConnectError as exc:
        return [
            CheckResult(
                "server_start",
                False,
                str(exc),
                "Run 'openenv serve' to see the error.",
                level="runtime",
            )
        ]
    with server:
        started = CheckResult(
            "server_start", True, f"serving at {server.base_url}", level="runtime"
        )
        return [
            started,
            *runtime_checks(server.base_url),
            *taskset_checks(target, server.base_url),
        ]
