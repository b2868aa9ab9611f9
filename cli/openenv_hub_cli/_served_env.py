"""An environment served for the time a command needs it (``openenv eval``, ``tasks``,
``rescore``): a server URL as given, or an environment folder or a dataset that declares an
environment, served by a server started for the duration."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openenv_hub_cli._utils import CommandError

if TYPE_CHECKING:
    from openenv_hub.hub import EnvironmentDataset

__all__ = ["DATASET_PREFIX", "ServedEnv", "env_url", "served_env"]

DATASET_PREFIX = "hf://datasets/"


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
        raise CommandError(
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
