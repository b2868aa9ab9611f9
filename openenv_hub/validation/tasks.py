"""The taskset check of ``openenv validate``: each task the manifest declares resets.

The first :data:`MAX_CHECKED_TASKS` tasks are reset one by one through ``POST /reset`` with the
task's reset arguments (a large set is sampled from its start, and the result says how many of
how many were checked), each within the check's bounds of :class:`RemoteTarget`. A generator
must also be reproducible: it makes the same row twice from the same seed.

Layer: client.
"""

from __future__ import annotations

import json

import httpx

from openenv_hub.checks.result import CheckResult
from openenv_hub.checks.target import EnvTarget
from openenv_hub.errors import ConfigurationError, ManifestError
from openenv_hub.eval import DeclaredTasks, declared_tasks, load_generator
from openenv_hub.model.manifest import Taskset
from openenv_hub.validation.remote import LimitExceeded, RemoteTarget

__all__ = ["MAX_CHECKED_TASKS", "taskset_checks"]

#: Tasks reset by a validation; a larger taskset is checked on its first ones.
MAX_CHECKED_TASKS = 20


def taskset_checks(
    target: EnvTarget, base_url: str, *, limit: int = MAX_CHECKED_TASKS, timeout_s: float = 10.0
) -> list[CheckResult]:
    """``taskset`` (it loads, and a generator is reproducible) and ``tasks_reset`` (each of the
    first ``limit`` tasks resets at ``base_url``); none when the manifest declares no taskset."""
    taskset = target.manifest.taskset if target.manifest is not None else None
    if taskset is None:
        return []
    try:
        declared = declared_tasks(target.path, limit=limit)
        assert declared is not None
        _check_reproducible(target, taskset, declared)
    except (ConfigurationError, ManifestError) as exc:
        hint = getattr(exc, "hint", "") or "Fix 'taskset:' in openenv.yaml."
        return [CheckResult("taskset", False, str(exc), hint, level="runtime")]
    loaded = CheckResult(
        "taskset", True, f"{declared.total} tasks from {declared.where}", level="runtime"
    )
    return [loaded, _resets(declared, base_url, timeout_s)]


def _check_reproducible(target: EnvTarget, taskset: Taskset, declared: DeclaredTasks) -> None:
    if taskset.generator is None:
        return
    generator = load_generator(taskset.generator, root=target.path)
    for task in declared.tasks:
        seed = int(task.key)
        if json.dumps(generator(seed), sort_keys=True) != json.dumps(
            generator(seed), sort_keys=True
        ):
            raise ConfigurationError(
                f"The task generator {taskset.generator} made two different tasks from seed {seed}.",
                hint="Draw every random choice from random.Random(seed), never from global state.",
            )


def _resets(declared: DeclaredTasks, base_url: str, timeout_s: float) -> CheckResult:
    checked = len(declared.tasks)
    total_s = timeout_s * max(6, checked)
    failures = []
    with RemoteTarget(base_url, timeout_s=timeout_s, total_timeout_s=total_s) as remote:
        for task in declared.tasks:
            remote.start_check()
            try:
                reply = remote.post("/reset", task.reset)
            except (httpx.HTTPError, LimitExceeded) as exc:
                failures.append(f"{task.split}/{task.key}: {type(exc).__name__}: {exc}")
                continue
            if reply.status_code != 200:
                failures.append(
                    f"{task.split}/{task.key} with {json.dumps(task.reset)[:80]}: "
                    f"HTTP {reply.status_code}: {reply.text[:160]}"
                )
    sampled = f" (the first {checked} of {declared.total})" if checked < declared.total else ""
    if failures:
        return CheckResult(
            "tasks_reset",
            False,
            f"{len(failures)} of {checked} tasks checked{sampled} do not reset:\n"
            + "\n".join(failures),
            "reset(**task's reset arguments) must start each task; fix the task or the "
            "environment's reset.",
            level="runtime",
        )
    return CheckResult(
        "tasks_reset", True, f"{checked} tasks checked{sampled}: each resets", level="runtime"
    )
