"""``openenv export harbor ENV -o DIR``: an environment's tasks as Harbor task folders.

- An environment made by ``openenv import harbor`` holds its Harbor tasks in ``tasks/``; they
  are written back as they are, file for file (the round trip); a link is followed only to a
  file inside its task folder, others are left out and named in the notes.
- Any other environment with a taskset (``taskset:`` in its manifest) gets one task folder a
  task. The environment runs inside the task's container: ``environment/`` is the environment
  folder as ``openenv push`` would upload it (a development install's wheel included), its
  Dockerfile made to run as root with ``/logs`` ready; the agent plays the episode from the
  shell with :mod:`~openenv_hub.importers.harbor_episode`; ``tests/test.sh`` replays the
  actions taken on a fresh server and writes their return to ``reward.txt``; and, when the
  manifest names an ``oracle``, ``solution/solve.sh`` plays it.

What does not carry over is said in :attr:`HarborExport.notes` (see docs/importing.md): above
all, the environment's code and data sit in the agent's container, where the agent can read and
change them.

Layer: client.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import Task, declared_tasks
from openenv_hub.hub import stage_bundle
from openenv_hub.importers.folders import staged_folder
from openenv_hub.importers.harbor_tasks import read_task_set
from openenv_hub.model.manifest import Manifest, load_manifest

__all__ = ["HarborExport", "export_harbor"]

#: Where the environment's folder is in its image when its Dockerfile does not say.
DEFAULT_APP_DIR = "/home/user/app"
_LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc")
_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class HarborExport:
    """What ``openenv export harbor`` wrote.

    Attributes:
        path: The folder of task folders.
        tasks: The task folders' names.
        round_trip: The tasks were a Harbor import's, written back unchanged.
        oracle: Each task has a ``solution/solve.sh``.
        notes: What of the environment does not carry over to Harbor.
    """

    path: Path
    tasks: list[str]
    round_trip: bool
    oracle: bool
    notes: list[str] = field(default_factory=list)


def export_harbor(
    env_dir: Path | str,
    destination: Path | str,
    *,
    split: str | None = None,
    limit: int | None = None,
) -> HarborExport:
    """Write the tasks of the environment folder ``env_dir`` as Harbor task folders in
    ``destination`` (which must not exist, or be empty); nothing is left behind if it fails.

    Raises:
        ConfigurationError: ``env_dir`` declares no taskset, or ``destination`` holds files.
    """
    env_dir, destination = Path(env_dir), Path(destination)
    manifest = load_manifest(env_dir)
    tasks_dir = env_dir / "tasks"
    if "harbor" in manifest.tags and any(tasks_dir.glob("*/task.toml")):
        left_out: list[tuple[str, str]] = []
        with staged_folder(destination) as staging:
            names = [task.name for task in read_task_set(tasks_dir)]
            for name in names:
                ignore = _links_left_out(tasks_dir / name, left_out)
                shutil.copytree(tasks_dir / name, staging / name, ignore=ignore)
        has_oracle = all((destination / n / "solution" / "solve.sh").is_file() for n in names)
        notes = [f"Left out {path}: a link to {why}." for path, why in left_out]
        return HarborExport(destination, names, True, has_oracle, notes)
    declared = declared_tasks(env_dir, split=split, limit=limit)
    if declared is None or not declared.tasks:
        raise ConfigurationError(
            f"{env_dir} declares no taskset: there are no tasks to export.",
            hint="Declare one in openenv.yaml (taskset: {source: tasks}), see docs/eval.md.",
        )
    with (
        tempfile.TemporaryDirectory(prefix="openenv-export-") as tmp,
        staged_folder(destination) as staging,
    ):
        app = _environment_image(env_dir, Path(tmp) / "app")
        names = _folder_names(declared.tasks)
        for task, name in zip(declared.tasks, names, strict=True):
            _write_task(staging / name, task, manifest, app)
    return HarborExport(
        destination, names, False, manifest.oracle_policy is not None, _notes(manifest)
    )


def _links_left_out(
    root: Path, left_out: list[tuple[str, str]]
) -> Callable[[str, list[str]], set[str]]:
    """What ``copytree`` leaves out of the task folder ``root``: caches, and every link except
    one to a file inside ``root`` (copied as that file); each link left out is added to
    ``left_out`` as (its path, why)."""
    inside = root.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        dropped = set(_LEFT_OUT(folder, names))
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink():
                continue
            target = path.resolve()
            if not target.is_relative_to(inside):
                left_out.append((str(path.relative_to(root.parent)), "outside the task folder"))
            elif not target.is_file():
                left_out.append((str(path.relative_to(root.parent)), "no file of the task"))
            else:
                continue
            dropped.add(name)
        return dropped

    return ignore


def _environment_image(env_dir: Path, staged: Path) -> tuple[Path, str]:
    """The environment folder as it is published, with a Dockerfile that runs as root and has
    ``/logs``; and the folder's path in the image."""
    bundle = stage_bundle(env_dir, staged, bundle_wheel=True)
    dockerfile = bundle.root / "Dockerfile"
    text = dockerfile.read_text(encoding="utf-8")
    workdirs = re.findall(r"^\s*WORKDIR\s+(\S+)\s*$", text, flags=re.M | re.I)
    dockerfile.write_text(text.rstrip() + _DOCKERFILE_TAIL, encoding="utf-8")
    return bundle.root, workdirs[-1] if workdirs else DEFAULT_APP_DIR


def _write_task(folder: Path, task: Task, manifest: Manifest, app: tuple[Path, str]) -> None:
    root, app_dir = app
    shutil.copytree(root, folder / "environment", ignore=_LEFT_OUT)
    row = json.dumps({"key": task.key, "split": task.split, "prompt": task.prompt,
                      "reset": task.reset}, ensure_ascii=True)  # fmt: skip
    variables = f"{{ OPENENV_TASK = {_toml(row)}, OPENENV_APP_DIR = {_toml(app_dir)} }}"
    (folder / "task.toml").write_text(
        _TASK_TOML.format(
            name=_toml(manifest.name), key=_toml(task.key), split=_toml(task.split),
            variables=variables,
        ),
        encoding="utf-8",
    )  # fmt: skip
    (folder / "instruction.md").write_text(
        _INSTRUCTION.format(prompt=task.prompt or "Play the task.", name=manifest.name),
        encoding="utf-8",
    )
    _script(folder / "tests" / "test.sh", _TEST_SH.format(app_dir=app_dir))
    if manifest.oracle_policy is not None:
        _script(folder / "solution" / "solve.sh", _SOLVE_SH.format(app_dir=app_dir))


def _folder_names(tasks: list[Task]) -> list[str]:
    """A folder name a task: its key (with its split when there are several splits)."""
    several = len({task.split for task in tasks}) > 1
    names = [_NAME.sub("-", f"{t.split}-{t.key}" if several else t.key).strip("-.") for t in tasks]
    if len(set(names)) != len(names) or not all(names):
        names = [f"{index:04d}-{name}" for index, name in enumerate(names)]
    return names


def _notes(manifest: Manifest) -> list[str]:
    notes = [
        "The environment's server runs in the agent's container: the agent can read its code "
        "and data (answers, hidden tests, the oracle) and change them before the test replays "
        "the episode.",
        "The reward is the episode's return, recomputed by replaying its actions from the "
        "task's reset arguments: an environment whose episodes do not replay the same grades "
        "otherwise than it played.",
        "The container has no network (task.toml says no-network).",
    ]
    if manifest.oracle_policy is None:
        notes.append("The manifest names no oracle: the tasks have no solution/.")
    return notes


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def _toml(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes are TOML's, for ASCII text)."""
    return json.dumps(text, ensure_ascii=True)


_DOCKERFILE_TAIL = """

# Harbor runs a task's commands, and its test, in this container as root, with /logs for the
# test's reward; the environment's server is started by each command (no CMD is run).
USER root
RUN mkdir -p /logs/agent /logs/verifier
"""

_TASK_TOML = """schema_version = "1.4"

[metadata]
openenv_environment = {name}
openenv_task = {key}
openenv_split = {split}

[agent]
timeout_sec = 900.0

[verifier]
timeout_sec = 300.0
env = {variables}

[environment]
build_timeout_sec = 1200.0
network_mode = "no-network"
env = {variables}
"""

_INSTRUCTION = """{prompt}

This task is an episode of the OpenEnv environment `{name}`, which runs in this container. Play
it from the shell:

- `python -m openenv_hub.importers.harbor_episode show` prints what the environment shows first
  and the tools it takes;
- `python -m openenv_hub.importers.harbor_episode act TOOL '{{"ARGUMENT": "VALUE"}}'` calls one
  tool and prints what the environment answered, the step's reward and whether the episode is
  done.

When the environment says the episode is done (or when you stop), your actions are replayed on
a fresh copy of the environment, and the sum of their rewards is your reward.
"""

_TEST_SH = """#!/bin/sh
# Replays the episode's actions on a fresh server of the environment; their return is the reward.
set -e
mkdir -p /logs/verifier
cd {app_dir}
python -m openenv_hub.importers.harbor_episode grade > /logs/verifier/reward.txt
"""

_SOLVE_SH = """#!/bin/sh
# The oracle: the policy the environment's manifest names, played through the environment.
set -e
cd {app_dir}
python -m openenv_hub.importers.harbor_episode oracle
"""
