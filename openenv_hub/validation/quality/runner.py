"""A scorecard of a running server: play the phases once (:mod:`.run`), then let each check read
what they played.

Layer: client.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

from openenv_hub.checks.scorecard import QualityCheck, Scorecard
from openenv_hub.support.sync_bridge import run_to_end
from openenv_hub.validation.quality.cost import check_cost
from openenv_hub.validation.quality.episodes import REQUEST_TIMEOUT_S, CouldNotCheck
from openenv_hub.validation.quality.isolation import play_isolation
from openenv_hub.validation.quality.leakage import MIN_CHARS, check_no_leakage
from openenv_hub.validation.quality.reproducible import (
    check_determinism,
    check_isolation,
    check_seeds,
)
from openenv_hub.validation.quality.rewards import check_floor, check_solvable, pass_threshold
from openenv_hub.validation.quality.run import (
    PHASES,
    QualityRun,
    choose_tasks,
    play_floors,
    play_oracle,
    read_server,
    replay_alone,
    reset_every_task,
    reset_other_seeds,
)
from openenv_hub.validation.quality.spec import QualitySpec

__all__ = ["QUALITY_CHECKS", "TOTAL_TIMEOUT_S", "scorecard"]

#: Seconds a whole scorecard may take.
TOTAL_TIMEOUT_S = 900.0

QUALITY_CHECKS: list[Callable[[QualityRun], QualityCheck]] = [
    check_solvable,
    check_floor,
    check_no_leakage,
    check_determinism,
    check_seeds,
    check_isolation,
    check_cost,
]


def scorecard(
    url: str,
    spec: QualitySpec,
    *,
    target: str = "",
    digest: str | None = None,
    pid: int | None = None,
    start_s: float | None = None,
    total_timeout_s: float = TOTAL_TIMEOUT_S,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> Scorecard:
    """The scorecard of the environment served at ``url``.

    Args:
        url: The server.
        spec: What to hold it to (the manifest's ``quality:`` section, loaded).
        target: What is being checked, as the scorecard names it (default: ``url``).
        digest: The digest of the folder's published files, for a folder.
        pid: The server's process, when this process started it (memory is read from it).
        start_s: How long the server took to start, when this process started it.
        total_timeout_s: Bound of the whole scorecard; what is left undone could not be checked.
        request_timeout_s: Bound of one reset or step; one that takes longer could not be
            checked.
    """
    started = time.monotonic()
    run = QualityRun(
        url.rstrip("/"),
        spec,
        deadline=started + total_timeout_s,
        request_timeout_s=request_timeout_s,
        pid=pid,
        start_s=start_s,
    )
    run_to_end(_play(run), thread_name="openenv-quality")
    checks = tuple(_checked(check, run) for check in QUALITY_CHECKS)
    return Scorecard(
        environment=spec.name or str(run.metadata.get("name") or ""),
        version=spec.version or str(run.metadata.get("version") or ""),
        checks=checks,
        target=target or url,
        checked_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        digest=digest,
        settings=_settings(run),
        duration_s=round(time.monotonic() - started, 1),
    )


async def _play(run: QualityRun) -> None:
    """Every phase; one the instrument could not finish is recorded, and the next one runs."""
    phases = [
        read_server,
        choose_tasks,
        play_oracle,
        play_floors,
        reset_every_task,
        replay_alone,
        reset_other_seeds,
        play_isolation,
    ]
    for name, phase in zip(PHASES, phases, strict=True):
        if name not in ("server", "tasks") and (not run.tasks or run.toolset is None):
            run.errors.setdefault(name, run.errors.get("tasks") or run.errors.get("server", ""))
            continue
        try:
            await phase(run)
        except CouldNotCheck as exc:
            run.errors[name] = str(exc)


def _checked(check: Callable[[QualityRun], QualityCheck], run: QualityRun) -> QualityCheck:
    """The check's result; a check that raises could not check (a defect of the instrument)."""
    name = check.__name__.removeprefix("check_")
    try:
        return check(run)
    except Exception as exc:  # a check must never take the scorecard down with it
        return QualityCheck(name, "error", f"the check failed: {type(exc).__name__}: {exc}")


def _settings(run: QualityRun) -> dict[str, object]:
    quality = run.spec.quality
    bounds = run.reward_range
    return {
        "tasks": ", ".join(task.key for task in run.tasks),
        "task_source": run.task_source,
        "oracle": run.spec.oracle_kind,
        "pass_threshold": pass_threshold(run)
        if run.reward_range or quality.pass_threshold
        else None,
        "reward_range": f"[{bounds[0]:g}, {bounds[1]:g}]" if bounds else "not declared",
        "margin": quality.margin,
        "max_steps": quality.max_steps,
        "sessions": quality.sessions,
        "seeded": quality.seeded,
        "exempt": ", ".join(sorted(quality.exempt)),
        "min_answer_chars": MIN_CHARS,
        "reset_p50_s": quality.cost.reset_p50_s,
        "step_p50_s": quality.cost.step_p50_s,
    }
