"""Where an evaluation's tasks and environment come from: ``--tasks``, the folder's manifest or
the environment's task routes; a URL as given, or a folder served for the time it takes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from openenv_hub_cli._utils import CommandError

__all__ = ["declared_source", "env_url", "find_tasks"]


def find_tasks(
    env: str,
    source: str | None,
    split: str | None,
    *,
    limit: int | None = None,
    url: str | None = None,
    name: Any = None,
) -> tuple[list[Any], int]:
    """The first ``limit`` tasks to play, and how many there are: the taskset given with
    --tasks, else the one ``env``'s manifest declares (a folder), else the tasks the
    environment lists (serving a folder for the time it takes when ``url`` is not given)."""
    from openenv_hub.eval import declared_tasks, environment_metadata, load_tasks, server_tasks

    if source:
        found = load_tasks(source, split=split)
        return found[:limit], len(found)
    if "://" not in env and (Path(env) / "openenv.yaml").is_file():
        declared = declared_tasks(Path(env), split=split, limit=limit)
        if declared is not None:
            return declared.tasks, declared.total
    if url is None:
        with env_url(env) as served:
            return find_tasks(env, None, split, limit=limit, url=served)
    name = name or environment_metadata(url).get("name") or "env"
    found = server_tasks(url, str(name), split=split)
    return found[:limit], len(found)


def declared_source(env: str) -> str | None:
    """What the manifest of the folder ``env`` names as its taskset (None for a URL)."""
    if "://" in env or not (Path(env) / "openenv.yaml").is_file():
        return None
    from openenv_hub.manifest import load_manifest

    taskset = load_manifest(env).taskset
    return None if taskset is None else taskset.source or taskset.generator


@contextmanager
def env_url(env: str) -> Iterator[str]:
    """The server URL of ``env``: as given for a URL; for an environment folder, a local server
    started for the duration (stopped at the end)."""
    if "://" in env:
        yield env
        return
    if not (Path(env) / "openenv.yaml").is_file():
        raise CommandError(
            f"{env!r} is neither a server URL nor an environment folder (no openenv.yaml).",
            hint="Pass http://host:port of a running server, or a folder made by 'openenv init'.",
        )
    from openenv_hub.client import GenericEnvClient

    client = GenericEnvClient.from_folder(env).sync()
    try:
        yield str(client.base_url)
    finally:
        client.close()
