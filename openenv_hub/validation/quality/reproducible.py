"""The checks of what repeats: ``determinism`` (an episode replayed gives the same observations
and rewards, so the grader gives the same reward to the same answer), ``seeds`` (a seed decides
the start; different tasks, or different seeds where the manifest says they choose the start,
give different starts) and ``isolation`` (sessions played at once give what each gave alone).

Layer: client.
"""

from __future__ import annotations

from collections import defaultdict

from openenv_hub.checks.scorecard import QualityCheck
from openenv_hub.validation.quality.compare import differences, field_difference, short
from openenv_hub.validation.quality.episodes import Episode
from openenv_hub.validation.quality.run import QualityRun
from openenv_hub.validation.quality.verdicts import could_not_check

__all__ = ["check_determinism", "check_isolation", "check_seeds"]


def _mismatches(pairs: list[tuple[Episode, Episode]], run: QualityRun) -> list[str]:
    found = []
    for original, again in pairs:
        where = differences(original, again, run.spec.volatile)
        if where:
            found.append(f"{original.task.key}, {original.policy}: {'; '.join(where[:3])}")
    return found


def check_determinism(run: QualityRun) -> QualityCheck:
    failed = could_not_check(run, "determinism", ("server", "tasks", "oracle", "floor", "replay"))
    if failed is not None:
        return failed
    if not run.replays:
        return QualityCheck("determinism", "skip", "no episode with steps to replay")
    steps = sum(len(original.steps) for original, _ in run.replays)
    ignored = sorted(run.spec.volatile)
    measured = {"episodes": len(run.replays), "steps": steps, "ignored_fields": ", ".join(ignored)}
    found = _mismatches(run.replays, run)
    if found:
        summary = f"{len(found)} of {len(run.replays)} episodes gave something else when replayed"
        hint = (
            "The same seed and actions must give the same observations and rewards: seed every "
            "random choice from reset(seed=...), and grade without randomness."
        )
        return QualityCheck("determinism", "fail", summary, tuple(found), measured, hint)
    note = f"; fields left out: {', '.join(ignored)}" if ignored else ""
    summary = f"{len(run.replays)} episodes ({steps} steps) replayed identically{note}"
    return QualityCheck("determinism", "pass", summary, (), measured)


def check_seeds(run: QualityRun) -> QualityCheck:
    failed = could_not_check(run, "seeds", ("server", "tasks", "floor", "every_task", "seeds"))
    if failed is not None:
        return failed
    by_task = _by_task(run)
    problems = _refused(run) + _unsteady(run, by_task) + _alike(run, by_task)
    starts = {key: episodes[0].first for key, episodes in by_task.items() if episodes}
    distinct = len({short(first, 10_000) for first in starts.values()})
    measured = {"tasks": len(by_task), "distinct_starts": distinct, "source": run.task_source}
    if problems:
        hint = (
            "reset(seed=S) must decide the whole start (draw from random.Random(seed)), and "
            "reset(task_id=...) must start that task."
        )
        summary = problems[0].split(":")[0]
        return QualityCheck("seeds", "fail", summary, tuple(problems), measured, hint)
    resets = sum(len(episodes) for episodes in by_task.values())
    summary = (
        f"{resets} resets of {len(by_task)} tasks ({run.task_source}): each seed gave one "
        f"start, {distinct} distinct"
    )
    return QualityCheck("seeds", "pass", summary, (), measured)


def _by_task(run: QualityRun) -> dict[str, list[Episode]]:
    """Every episode of each task that reset with the task's own arguments."""
    by_task: dict[str, list[Episode]] = defaultdict(list)
    for episode in run.episodes():
        if episode.reset == run.reset_of(episode.task):
            by_task[episode.task.key].append(episode)
    return by_task


def _refused(run: QualityRun) -> list[str]:
    refused = {e.task.key: e.refused for e in run.episodes() if e.refused is not None}
    return [f"reset of task {key} refused: {short(why, 200)}" for key, why in refused.items()]


def _unsteady(run: QualityRun, by_task: dict[str, list[Episode]]) -> list[str]:
    """Tasks whose resets, with one seed and the same arguments, started differently."""
    found = []
    for key, episodes in by_task.items():
        started = [e for e in episodes if e.first is not None]
        for other in started[1:]:
            changed = field_difference(started[0].first, other.first, run.spec.volatile)
            if changed:
                found.append(
                    f"the seed does not decide the start: task {key} reset twice with "
                    f"{short(started[0].reset)} began with {changed}"
                )
                break
    return found


def _alike(run: QualityRun, by_task: dict[str, list[Episode]]) -> list[str]:
    """Different tasks (or seeds, where they are said to choose) that start alike."""
    starts = {key: episodes[0].first for key, episodes in by_task.items() if episodes}
    found = []
    if run.task_source != "seeds" and len(starts) > 1:
        keys_of: dict[str, list[str]] = defaultdict(list)
        for key, first in starts.items():
            keys_of[short(first, 100_000)].append(key)
        found += [
            f"different tasks start alike: {', '.join(keys)} (is the task argument ignored?)"
            for keys in keys_of.values()
            if len(keys) > 1
        ]
    if run.spec.quality.seeded:
        seeded = [*starts.values(), *(e.first for e in run.seed_starts)]
        shown = {short(first, 100_000) for first in seeded if first is not None}
        if len(seeded) > 1 and len(shown) == 1:
            found.append(
                f"seeds do not choose the start: {len(seeded)} seeds gave one first observation, "
                "and quality.seeded says they choose among many"
            )
    return found


def check_isolation(run: QualityRun) -> QualityCheck:
    failed = could_not_check(run, "isolation", ("server", "tasks", "replay", "isolation"))
    if failed is not None:
        return failed
    unsteady = _unsteady(run, _by_task(run))
    if unsteady:
        why = (
            "a seed does not decide the start (see seeds), so sessions played at once cannot "
            "be compared with the same episodes played alone"
        )
        return QualityCheck("isolation", "skip", why, tuple(unsteady[:3]))
    if not run.isolation:
        return QualityCheck("isolation", "skip", run.isolation_note or "nothing to compare")
    sessions = len(run.isolation)
    steps = sum(len(original.steps) for original, _ in run.isolation)
    measured = {"sessions": sessions, "steps": steps}
    found = _mismatches(run.isolation, run)
    if found:
        summary = (
            f"{len(found)} of {sessions} sessions played at once differ from the same episode "
            "played alone"
        )
        hint = "Keep every episode's state on its environment instance, never in class or module state."
        return QualityCheck("isolation", "fail", summary, tuple(found), measured, hint)
    summary = f"{sessions} sessions stepped at once, interleaved ({steps} steps), each as alone"
    return QualityCheck("isolation", "pass", summary, (), measured)
