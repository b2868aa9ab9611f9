"""The checks of what a reward means: ``solvable`` (the oracle reaches the top on every task,
and every reward seen lies in the declared range) and ``floor`` (every non-solution stays a
margin below the oracle).

Layer: client.
"""

from __future__ import annotations

import math

from openenv_hub.checks.scorecard import QualityCheck
from openenv_hub.validation.quality.policies import BUILT_IN
from openenv_hub.validation.quality.run import QualityRun
from openenv_hub.validation.quality.verdicts import could_not_check

__all__ = ["check_floor", "check_solvable", "pass_threshold"]

TOLERANCE = 1e-9
DECLARE_ORACLE = (
    "Name an oracle in openenv.yaml: quality: oracle: policy: module:function, or "
    "solutions: FILE (see docs/quality.md)."
)


def pass_threshold(run: QualityRun) -> float | None:
    """The return that solves a task: the manifest's, else the top of a bounded reward range."""
    declared = run.spec.quality.pass_threshold
    if declared is not None:
        return declared
    top = run.reward_range[1] if run.reward_range else math.inf
    return top if math.isfinite(top) else None


def check_solvable(run: QualityRun) -> QualityCheck:
    outside = _outside_range(run)
    if outside:
        low, high = run.reward_range or (-math.inf, math.inf)
        return QualityCheck(
            "solvable", "fail",
            f"{len(outside)} reward(s) outside the declared range [{low:g}, {high:g}]",
            tuple(outside[:20]), {"outside_range": len(outside)},
            "Keep every reward in reward_range, or declare the range the rewards really have.",
        )  # fmt: skip
    failed = could_not_check(run, "solvable", ("server", "tasks", "oracle"))
    if failed is not None:
        return failed
    if "oracle" in run.problems:
        hint = "Fix quality.oracle in openenv.yaml."
        return QualityCheck("solvable", "fail", run.problems["oracle"], hint=hint)
    if run.spec.quality.oracle is None:
        return QualityCheck(
            "solvable", "skip", "no oracle declared", _range_note(run), {}, DECLARE_ORACLE
        )
    threshold = pass_threshold(run)
    if threshold is None:
        return QualityCheck(
            "solvable", "skip", "no pass threshold: the reward range has no top",
            hint="Declare quality.pass_threshold: the return that solves a task.",
        )  # fmt: skip
    bottom = run.reward_range[0] if run.reward_range else -math.inf
    if threshold <= bottom + TOLERANCE:
        return QualityCheck(
            "solvable", "fail",
            f"quality.pass_threshold {threshold:g} is at or below the bottom of the reward "
            f"range ({bottom:g}): any return, the worst included, would count as solving a task",
            hint="Set quality.pass_threshold to the return only a solution reaches, or leave it "
            "out to use the top of the reward range.",
        )  # fmt: skip
    return _oracle_verdict(run, threshold)


def _oracle_verdict(run: QualityRun, threshold: float) -> QualityCheck:
    lines, failed, returns = [], 0, {}
    for task in run.tasks:
        episode = run.oracle.get(task.key)
        if episode is None or episode.refused is not None:
            why = episode.refused if episode is not None else "the oracle did not play it"
            lines.append(f"{task.key}: not solved ({why})")
            failed += 1
            continue
        returns[task.key] = episode.total
        refusals = [s.refused for s in episode.steps if s.refused]
        if episode.total + TOLERANCE < threshold:
            failed += 1
            extra = f"; refused: {refusals[0]}" if refusals else ""
            lines.insert(0, f"{task.key}: return {episode.total:g} < {threshold:g}{extra}")
        else:
            lines.append(f"{task.key}: return {episode.total:g} in {len(episode.steps)} step(s)")
    measured = {"pass_threshold": threshold, "returns": returns, "tasks": len(run.tasks)}
    evidence = (*lines, *_range_note(run))
    if failed:
        summary = f"the oracle ({run.spec.oracle_kind}) solved {len(run.tasks) - failed} of {len(run.tasks)} tasks"
        hint = "A correct solution must reach the top: check the grader against the oracle."
        return QualityCheck("solvable", "fail", summary, evidence, measured, hint)
    summary = f"the oracle reached {threshold:g} on all {len(run.tasks)} tasks"
    return QualityCheck("solvable", "pass", summary, evidence, measured)


def _outside_range(run: QualityRun) -> list[str]:
    if run.reward_range is None:
        return []
    low, high = run.reward_range
    return [
        f"{episode.task.key}, {episode.policy}, {where}: reward {reward:g}"
        for episode in run.episodes()
        for where, reward in episode.rewards()
        if not (low - TOLERANCE <= reward <= high + TOLERANCE)
    ]


def _range_note(run: QualityRun) -> tuple[str, ...]:
    count = sum(1 for episode in run.episodes() for _ in episode.rewards())
    if run.reward_range is None:
        return (f"{count} rewards seen; no reward range is declared to hold them to",)
    low, high = run.reward_range
    if math.isinf(low) and math.isinf(high):
        return (f"{count} rewards seen; the declared range [{low:g}, {high:g}] bounds none",)
    return (f"{count} rewards seen, all within [{low:g}, {high:g}]",)


def check_floor(run: QualityRun) -> QualityCheck:
    failed = could_not_check(run, "floor", ("server", "tasks", "oracle", "floor"))
    if failed is not None:
        return failed
    if "floor" in run.problems:
        return QualityCheck("floor", "fail", run.problems["floor"], hint="Fix quality.degenerate.")
    threshold = pass_threshold(run)
    targets = {
        task.key: run.oracle[task.key].total if task.key in run.oracle else threshold
        for task in run.tasks
    }
    if any(target is None for target in targets.values()):
        return QualityCheck(
            "floor", "skip", "no oracle and no bounded reward to hold the non-solutions below",
            hint=DECLARE_ORACLE,
        )  # fmt: skip
    margin = run.spec.quality.margin
    bounds = {key: t - margin * abs(t) for key, t in targets.items() if t is not None}
    tops = {key: t for key, t in targets.items() if t is not None}
    failing: list[str] = []
    holding: list[str] = []
    exempt = run.spec.quality.exempt
    for name in (name for name in _order(run) if name not in exempt):
        line, ok = _policy_line(run, name, bounds, tops)
        (holding if ok else failing).append(line)
    notes = [f"{name}: exempt: {why}" for name, why in exempt.items()]
    notes += [f"{name}: not played: {why}" for name, why in run.not_played.items()]
    measured = {
        "margin": margin,
        "bounds": bounds,
        "returns": {n: {k: e.total for k, e in by.items()} for n, by in run.floors.items()},
    }
    played = len(failing) + len(holding)
    if not played:
        return QualityCheck(
            "floor", "skip",
            "could not check: no non-solution was played (every one was exempt or not played), "
            "so nothing shows that a non-solution earns less than a solution",
            tuple(notes), measured,
            "Exempt only the non-solutions that solve the tasks by design, or add your own with "
            "quality.degenerate.",
        )  # fmt: skip
    if failing:
        summary = f"{len(failing)} of {played} non-solutions came within the margin of the oracle"
        hint = "A non-solution earns (almost) what a solution earns: the reward can be gamed."
        return QualityCheck("floor", "fail", summary, (*failing, *holding, *notes), measured, hint)
    summary = (
        f"{played} non-solutions stayed below the oracle's return, by at least {margin:g} of it"
    )
    return QualityCheck("floor", "pass", summary, (*holding, *notes), measured)


def _order(run: QualityRun) -> list[str]:
    own = [name for name in run.floors if name not in BUILT_IN]
    return [*own, *(name for name in BUILT_IN if name in run.floors)]


def _policy_line(
    run: QualityRun, name: str, bounds: dict[str, float], tops: dict[str, float]
) -> tuple[str, bool]:
    """A non-solution holds on a task when its return is strictly below the oracle's (beyond
    the tolerance: equal is a solution's pay) and within the margin's bound."""
    parts, ok = [], True
    for key, episode in run.floors[name].items():
        bound = bounds[key]
        below = episode.total < tops[key] - TOLERANCE
        held = below and episode.total <= bound + TOLERANCE
        ok = ok and held
        refused = " (refused)" if episode.steps and all(s.refused for s in episode.steps) else ""
        note = f" ({run.notes[name, key]})" if (name, key) in run.notes else ""
        over = "" if held else _why_not_held(episode.total, bound, tops[key])
        parts.append(f"{episode.total:g} on {key}{refused}{over}{note}")
    uniform = len(set(bounds.values())) == 1
    limit = f" (at most {next(iter(bounds.values())):g})" if uniform and bounds else ""
    return f"{name}: " + ", ".join(parts) + limit, ok


def _why_not_held(total: float, bound: float, top: float) -> str:
    return f" > {bound:g}" if total > bound + TOLERANCE else f", not below the oracle's {top:g}"
