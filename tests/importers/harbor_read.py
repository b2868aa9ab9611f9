"""Run in a venv with the ``harbor`` package (Python >= 3.12): read each task folder given with
harbor's own reader (``harbor.models.task.task.Task``, its network plan and its variable
resolution) and print, as JSON, what it read of each, field by field, under the names of
``openenv_hub.importers.HarborTask``; a folder harbor refuses gets ``{"error": ...}``.

    python harbor_read.py FOLDER [FOLDER ...] > read.json
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any


def read(folder: Path) -> dict[str, Any]:
    from harbor.models.task.config import NetworkMode
    from harbor.models.task.task import Task
    from harbor.models.task.verifier_mode import resolve_task_verifier_mode
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig, VerifierConfig
    from harbor.trial.network_policy import resolve_trial_network_plan
    from harbor.utils.env import resolve_env_vars

    task = Task(folder)
    config = task.config
    plan = resolve_trial_network_plan(
        config,
        AgentConfig(),
        EnvironmentConfig(),
        VerifierConfig(),
        None,
        verifier_mode=resolve_task_verifier_mode(config),
    )
    baseline_declared = "network_mode" in config.environment.model_fields_set
    environment = config.environment
    return {
        "name": task.paths.task_dir.name,
        "package": config.task.name if config.task is not None else None,
        "instruction": task.instruction,
        "agent_timeout_s": config.agent.timeout_sec,
        "verifier_timeout_s": config.verifier.timeout_sec,
        "build_timeout_s": environment.build_timeout_sec,
        "memory_mb": environment.memory_mb,
        "cpus": environment.cpus,
        "docker_image": environment.docker_image,
        "workdir": environment.workdir,
        "env": resolve_env_vars(environment.env),
        "verifier_env": resolve_env_vars(config.verifier.env),
        "agent_network_mode": plan.agent_phase.network_mode.value,
        "verifier_network_mode": plan.verifier_phase.network_mode.value,
        "agent_network_declared": baseline_declared or config.agent.network_mode is not None,
        "verifier_network_declared": (
            baseline_declared or config.verifier.network_mode is not None
        ),
        "public": NetworkMode.PUBLIC.value,
        "has_oracle": task.paths.solve_path.is_file(),
        "test_script": str(task.paths.tests_dir / "test.sh"),
    }


def main(folders: list[str]) -> None:
    warnings.simplefilter("ignore")  # harbor warns of the older fields it still reads
    found: dict[str, Any] = {}
    for folder in folders:
        try:
            found[folder] = read(Path(folder))
        except Exception as exc:  # what harbor refuses, and why, is part of what it read
            found[folder] = {"error": f"{type(exc).__name__}: {exc}"}
    json.dump(found, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
