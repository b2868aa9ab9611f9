"""``openenv validate``: small checks, each returning a :class:`CheckResult`.

Levels add up: ``static`` reads files, ``import`` imports the app and its classes, ``runtime``
serves the app in a child process and talks to it, ``docker`` builds and runs the Space image.
``quality`` adds to ``runtime`` (not ``docker``) a scorecard of the environment as a training
signal (:mod:`openenv_hub.validation.quality`, docs/quality.md), played against the same server.
A URL is checked with the runtime checks, and the quality ones when asked.

Example:
    >>> from pathlib import Path
    >>> results = validate_path(Path("envs/echo_env"), level="static")  # doctest: +SKIP
    >>> passed(results)  # doctest: +SKIP
    True

Layer: client.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub.checks.result import CheckResult, passed, report, report_json, run_checks

if TYPE_CHECKING:
    from openenv_hub.checks.scorecard import Scorecard
    from openenv_hub.checks.target import EnvTarget

__all__ = [
    "LEVELS",
    "LEVEL_STEPS",
    "CheckResult",
    "passed",
    "report",
    "report_json",
    "validate_path",
    "validate_url",
]

LEVELS = ("static", "import", "runtime", "docker", "quality")
#: The levels each level runs, in order.
LEVEL_STEPS = {
    "static": ("static",),
    "import": ("static", "import"),
    "runtime": ("static", "import", "runtime"),
    "docker": ("static", "import", "runtime", "docker"),
    "quality": ("static", "import", "runtime", "quality"),
}
ScorecardCallback = Callable[["Scorecard"], None]


def validate_url(
    url: str,
    *,
    timeout_s: float = 10.0,
    total_timeout_s: float | None = None,
    level: str = "runtime",
    manifest_dir: Path | None = None,
    on_scorecard: ScorecardCallback | None = None,
) -> list[CheckResult]:
    """The runtime checks against a running server (one of ours, or an OpenEnv one); with
    ``level="quality"``, then the quality checks, held to the ``quality:`` section of the
    manifest in ``manifest_dir`` (its defaults without one).

    Each runtime check gets ``timeout_s`` in total, however the server trickles its answers,
    and the runtime checks ``total_timeout_s`` (default six times ``timeout_s``).
    ``on_scorecard`` receives the quality scorecard.
    """
    from openenv_hub.validation.runtime import runtime_checks

    results = runtime_checks(url, timeout_s=timeout_s, total_timeout_s=total_timeout_s)
    results = _hint_at_the_web_ui_path(url, results)
    if level != "quality":
        return results
    if not passed(results):
        return [
            *results,
            CheckResult.skip("quality_checks", "earlier checks failed", level="quality"),
        ]
    from openenv_hub.checks.target import EnvTarget

    target = EnvTarget.load(manifest_dir) if manifest_dir is not None else None
    return results + _quality(url, target, on_scorecard=on_scorecard)


def _hint_at_the_web_ui_path(url: str, results: list[CheckResult]) -> list[CheckResult]:
    """Where ``url`` names the web UI (``.../web``) and checks failed, the first failure's hint
    says to drop ``/web``: the API is at the server's root."""
    from dataclasses import replace

    from openenv_hub.protocol.urls import web_ui_path_hint

    hint = web_ui_path_hint(url)
    failed = [i for i, result in enumerate(results) if not result.ok]
    if not hint or not failed:
        return results
    first = results[failed[0]]
    results = list(results)
    results[failed[0]] = replace(first, hint=f"{hint} {first.hint}".strip())
    return results


def validate_path(
    path: Path,
    *,
    level: str = "runtime",
    base_image: str | None = None,
    build_args: Sequence[str] = (),
    security_opts: Sequence[str] = (),
    on_scorecard: ScorecardCallback | None = None,
) -> list[CheckResult]:
    """Checks of an environment folder up to ``level``; stops at the first level that fails.

    ``security_opts`` are ``docker run --security-opt`` values for ``level="docker"``. An app
    Space (``kind: app``) has static checks only. ``on_scorecard`` receives the scorecard of
    ``level="quality"``.
    """
    from openenv_hub.checks.static import static_checks
    from openenv_hub.checks.target import EnvTarget

    target = EnvTarget.load(path)
    results = run_checks(static_checks(target), target, level="static")
    wanted = LEVEL_STEPS[level]
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
        if next_level == "runtime":
            results += _served(target, with_quality="quality" in wanted, on_scorecard=on_scorecard)
            if "quality" in wanted:
                break
            continue
        results += _level(
            next_level,
            target,
            base_image=base_image,
            build_args=build_args,
            security_opts=security_opts,
        )
    return results


def _level(level: str, target: EnvTarget, **docker: object) -> list[CheckResult]:
    assert target.manifest is not None
    if level == "import":
        from openenv_hub.validation.imports import import_checks

        return import_checks(target)
    from openenv_hub.validation.docker import docker_checks

    return docker_checks(target, **docker)  # type: ignore[arg-type]


def _served(
    target: EnvTarget, *, with_quality: bool, on_scorecard: ScorecardCallback | None
) -> list[CheckResult]:
    """The runtime checks against the app served in a child process; then, if asked and they
    passed, the quality checks against the same server."""
    import time

    from openenv_hub.errors import ConnectError
    from openenv_hub.runtimes import start
    from openenv_hub.validation.runtime import runtime_checks
    from openenv_hub.validation.tasks import taskset_checks

    assert target.manifest is not None
    started_at = time.monotonic()
    try:
        server = start("local", "folder", target.path.resolve())
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
    start_s = time.monotonic() - started_at
    with server:
        started = CheckResult(
            "server_start", True, f"serving at {server.base_url}", level="runtime"
        )
        results = [
            started,
            *runtime_checks(server.base_url),
            *taskset_checks(target, server.base_url),
        ]
        if not with_quality:
            return results
        if not passed(results):
            skipped = CheckResult.skip("quality_checks", "earlier checks failed", level="quality")
            return [*results, skipped]
        quality = _quality(
            server.base_url,
            target,
            on_scorecard=on_scorecard,
            pid=server.replicas()[0].pid,  # its memory and threads are measured
            start_s=start_s,
        )
        return results + quality


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (a scorecard names no
    machine's folders), else as given."""
    resolved = path.resolve()
    return (
        resolved.relative_to(Path.cwd()).as_posix()
        if resolved.is_relative_to(Path.cwd())
        else str(path)
    )


def _quality(
    url: str,
    target: EnvTarget | None,
    *,
    on_scorecard: ScorecardCallback | None,
    pid: int | None = None,
    start_s: float | None = None,
) -> list[CheckResult]:
    from openenv_hub.hub import folder_digest
    from openenv_hub.validation.quality import QualitySpec, scorecard

    if target is not None and target.manifest is None:
        return [CheckResult("quality_manifest", False, str(target.manifest_error), level="quality")]
    spec = QualitySpec.of(target.manifest, target.path) if target else QualitySpec()
    served_from = pid is not None and target is not None
    card = scorecard(
        url,
        spec,
        target=_shown(target.path) if served_from and target else url,
        digest=folder_digest(target.path.resolve()) if served_from and target else None,
        pid=pid,
        start_s=start_s,
    )
    if on_scorecard is not None:
        on_scorecard(card)
    return card.results()
