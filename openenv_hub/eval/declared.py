"""The taskset an environment's manifest declares (``taskset:`` in ``openenv.yaml``), read from
its folder: JSON Lines files inside the folder, a Hub dataset, or a generator keyed by seed; and
the taskset of an environment a Hub dataset declares (:func:`dataset_tasks`).

Layer: client.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval.generators import generated_tasks, load_generator
from openenv_hub.eval.tasksets import HUB_PREFIX, Task, check_unique, load_tasks, task_from_row
from openenv_hub.model.manifest import Taskset, load_manifest

if TYPE_CHECKING:
    from openenv_hub.hub import EnvironmentDataset

__all__ = ["DeclaredTasks", "dataset_tasks", "declared_tasks"]


@dataclass(frozen=True)
class DeclaredTasks:
    """The first tasks of a declared taskset, and how many it holds in all.

    Attributes:
        tasks: The tasks (all of them, or the first ``limit``).
        total: How many tasks the taskset holds (a generator's ``size``).
        where: What the manifest names: the source, or the generator.
    """

    tasks: list[Task]
    total: int
    where: str


def declared_tasks(
    env_dir: Path, *, split: str | None = None, limit: int | None = None
) -> DeclaredTasks | None:
    """The tasks ``env_dir``'s manifest declares, or None when it declares none.

    Args:
        env_dir: The environment folder.
        split: Keep only this split.
        limit: Make or keep only the first ``limit`` tasks.

    Raises:
        ConfigurationError: The taskset cannot be read, or holds no task of ``split``.
    """
    taskset = load_manifest(env_dir).taskset
    if taskset is None:
        return None
    if taskset.generator is not None:
        return _generated(env_dir, taskset, split, limit)
    assert taskset.source is not None  # the manifest's model requires one of the two
    source = _source_path(env_dir, taskset.source)
    found = load_tasks(source, split=split, splits=taskset.splits, key_column=taskset.key)
    return DeclaredTasks(found[:limit], len(found), taskset.source)


def dataset_tasks(
    dataset: EnvironmentDataset, *, split: str | None = None, limit: int | None = None
) -> DeclaredTasks | None:
    """The tasks of the environment ``dataset`` declares: its folder's declared taskset when
    the folder is in the dataset and its manifest declares one, else the dataset's task rows;
    None when it has neither (the environment's own task routes list them then).

    Raises:
        ConfigurationError: A row has no key, or two rows of a split have one key.
    """
    folder = dataset.folder
    if folder is not None and dataset.declaration.dataset is None:
        declared = declared_tasks(folder, split=split, limit=limit)
        if declared is not None:
            return DeclaredTasks(declared.tasks, declared.total, dataset.reference)
    rows = dataset.rows(split)
    if not rows:
        return None
    tasks = [
        task_from_row({k: v for k, v in row.items() if k != "split"}, str(row["split"]))
        for row in rows
    ]
    check_unique(tasks, dataset.reference)
    return DeclaredTasks(tasks[:limit], len(tasks), dataset.reference)


def _generated(
    env_dir: Path, taskset: Taskset, split: str | None, limit: int | None
) -> DeclaredTasks:
    assert taskset.generator is not None
    if split not in (None, taskset.split):
        raise ConfigurationError(
            f"The task generator of {env_dir} makes split {taskset.split!r}, not {split!r}.",
            hint=f"Pass --split {taskset.split}, or none.",
        )
    generator = load_generator(taskset.generator, root=env_dir)
    tasks = generated_tasks(generator, split=taskset.split, size=taskset.size, limit=limit)
    return DeclaredTasks(tasks, taskset.size, taskset.generator)


def _source_path(env_dir: Path, source: str) -> str:
    """A Hub dataset as given; a folder, resolved inside the environment folder."""
    if source.startswith(HUB_PREFIX):
        return source
    folder = env_dir.resolve()
    path = (folder / source).resolve()
    if not path.is_relative_to(folder):
        raise ConfigurationError(
            f"The taskset {source!r} of {env_dir} is outside the environment folder.",
            hint="Keep the tasks inside the folder (they ship with the Space), "
            "or publish them as a dataset: hf://datasets/NS/NAME.",
        )
    return str(path)
