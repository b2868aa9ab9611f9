"""Where an evaluation's tasks and environment come from: ``--tasks``, the folder's manifest, the
rows of a dataset that declares the environment, or the environment's task routes; a URL as
given, or a folder or a dataset's environment served for the time it takes.

The order is ``openenv eval``'s and ``openenv tasks``': the first source that has tasks wins.

Layer: client.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openenv_hub.errors import ConfigurationError

if TYPE_CHECKING:
    from openenv_hub.hub import EnvironmentDataset

__all__ = ["DATASET_PREFIX", "ServedEnv", "declared_source", "env_url", "find_tasks", "served_env"]

DATASET_PREFIX = "hf://datasets/"


def find_tasks(
    env: str,
    source: str | None,
    split: str | None,
    *,
    limit: int | None = None,
    url: str | None = None,
    name: Any = None,
    served: ServedEnv | None = None,
) -> tuple[list[Any], int]:
    """The first ``limit`` tasks to play, and how many there are: the taskset given with
    --tasks, else the one ``env``'s manifest declares (a folder) or the rows of the dataset
    that declares it, else the tasks the environment lists (serving ``env`` for the time it
    takes when ``url`` is not given)."""
    from openenv_hub.eval.declared import dataset_tasks, declared_tasks
    from openenv_hub.eval.tasksets import load_tasks, server_tasks
    from openenv_hub.eval.toolset import environment_metadata

    if source:
        found = load_tasks(source, split=split)
        return found[:limit], len(found)
    if served is not None and served.dataset is not None:
        from_dataset = dataset_tasks(served.dataset, split=split, limit=limit)
        if from_dataset is not None:
            return from_dataset.tasks, from_dataset.total
    elif "://" not in env and (Path(env) / "openenv.yaml").is_file():
        declared = declared_tasks(Path(env), split=split, limit=limit)
        if declared is not None:
            return declared.tasks, declared.total
    if url is None:
        with served_env(env) as started:
            return find_tasks(env, None, split, limit=limit, url=started.url, served=started)
    name = name or environment_metadata(url).get("name") or "env"
    found = server_tasks(url, str(name), split=split)
    return found[:limit], len(found)


def declared_source(served: ServedEnv) -> str | None:
    """What the folder's manifest names as its taskset, or the dataset (None for a URL)."""
    if served.dataset is not None:
        return served.dataset.reference
    if served.folder is None:
        return None
    from openenv_hub.model.manifest import load_manifest

    taskset = load_manifest(served.folder).taskset
    return None if taskset is None else taskset.source or taskset.generator


@dataclass(frozen=True)
class ServedEnv:
    """An environment being served for a command: its URL, and what it was served from.

    Attributes:
        url: The server's URL.
        pinned: What names it exactly: the URL, the folder, or the dataset at its commit.
        folder: The environment folder, when one was served.
        dataset: The dataset that declares it, when one was resolved.
    """

    url: str
    pinned: str
    folder: Path | None = None
    dataset: EnvironmentDataset | None = None


@contextmanager
def served_env(env: str, *, runtime: str | None = None, yes: bool = False) -> Iterator[ServedEnv]:
    """``env`` served for the duration: a URL as given; an environment folder or a dataset
    that declares an environment (``hf://datasets/NS/NAME``), by a server started now with
    ``runtime`` and stopped at the end (a dataset's code runs only with consent: ``yes``, or
    a "yes" at a terminal)."""
    from openenv_hub.client import GenericEnvClient

    if env.startswith(DATASET_PREFIX):
        launched = GenericEnvClient.from_hub(env, runtime=runtime, trust_remote_code=yes)
        client = launched.sync()
        dataset = launched.dataset
        assert dataset is not None  # from_hub of a dataset sets it
        try:
            yield ServedEnv(str(client.base_url), dataset.reference, dataset.folder, dataset)
        finally:
            client.close()
        return
    if "://" in env:
        yield ServedEnv(env, env)
        return
    if not (Path(env) / "openenv.yaml").is_file():
        raise ConfigurationError(
            f"{env!r} is neither a server URL nor an environment folder (no openenv.yaml).",
            hint="Pass http://host:port of a running server, a folder made by 'openenv init', "
            "or hf://datasets/NS/NAME of a dataset that declares an environment.",
        )
    started = GenericEnvClient.from_folder(env, runtime=runtime or "local").sync()
    try:
        yield ServedEnv(str(started.base_url), env, Path(env))
    finally:
        started.close()


@contextmanager
def env_url(env: str) -> Iterator[str]:
    """The server URL of ``env`` (see :func:`served_env`), for the duration."""
    with served_env(env) as served:
        yield served.url
