"""Publishing recorded trajectories as a Hugging Face dataset repository, and reading them back.

The file goes to ``data/`` in the dataset repo, in one commit with a dataset card (added the
first time only) whose ``configs`` make ``datasets.load_dataset("NS/NAME")`` read every file
there as the ``train`` split. :func:`read_hub_records` reads the records of every trajectory
file there (the web UI's Replay tab opens a dataset with it).

Layer: client.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from openenv_hub.errors import ConfigurationError, InvalidRepoIdError
from openenv_hub.hub import HubContext, hub_call, parse_repo_id, resolve_endpoint
from openenv_hub.trajectories.files import FORMATS, _format_of, read_records

__all__ = ["dataset_card", "push_trajectories", "read_hub_records"]

MAX_DATASET_FILES = 100  # trajectory files read from one dataset, at most


def dataset_card(env_name: str, suffix: str) -> str:
    """The README.md of a new trajectory dataset."""
    return (
        "---\n"
        "configs:\n"
        "- config_name: default\n"
        "  data_files:\n"
        "  - split: train\n"
        f"    path: data/*{suffix}\n"
        "tags:\n"
        "- openenv\n"
        "- trajectories\n"
        "- reinforcement-learning\n"
        "---\n\n"
        f"# Episodes of {env_name}\n\n"
        "Recorded with `openenv record`: one row per reset (step 0) and step, with the action, "
        "the observation and the reward breakdown as JSON text, the reward as sent and as "
        "attributed back to each step, timings, and the environment's name and version.\n"
    )


def _dataset_id(value: str) -> str:
    try:
        return str(parse_repo_id(value))
    except InvalidRepoIdError:
        raise InvalidRepoIdError(
            f"{value!r} is not a valid dataset id.",
            repo_id=value,
            hint="Use 'namespace/name', e.g. 'alice/echo-episodes'.",
        ) from None


def push_trajectories(
    path: str | os.PathLike[str],
    repo_id: str,
    *,
    env_name: str,
    private: bool | None = None,
    token: str | None = None,
    endpoint: str | None = None,
) -> str:
    """Upload a trajectory file to the dataset ``repo_id`` (created when missing).

    Returns:
        The URL of the dataset.
    """
    file = Path(path)
    suffix = _format_of(file)
    if not file.is_file():
        raise ConfigurationError(f"No trajectory file at {file}")
    dataset = _dataset_id(repo_id)
    hub = HubContext.create(endpoint=endpoint, token=token, required=True, action="push a dataset")
    from huggingface_hub import CommitOperationAdd

    api = hub.api
    with hub_call(hub, "push trajectories", repo_id=dataset, repo_type="dataset"):
        api.create_repo(dataset, repo_type="dataset", private=private, exist_ok=True)
        operations = [CommitOperationAdd(f"data/{file.name}", str(file))]
        if not api.file_exists(dataset, "README.md", repo_type="dataset"):
            card = dataset_card(env_name, suffix).encode()
            operations.append(CommitOperationAdd("README.md", card))
        api.create_commit(
            dataset,
            operations,
            commit_message=f"Add {file.name} (episodes of {env_name})",
            repo_type="dataset",
        )
    return f"{hub.endpoint}/datasets/{dataset}"


def read_hub_records(
    repo_id: str,
    *,
    revision: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    anonymous: bool = False,
) -> list[dict[str, Any]]:
    """Every record of the trajectory files (``data/*.jsonl``, ``data/*.parquet``) of the
    dataset ``repo_id``, file by file in name order, as :func:`read_records` gives them.
    ``anonymous=True`` reads without any token (public datasets only): what a server does for
    its visitors, who must not read what the server's own token may."""
    dataset = _dataset_id(repo_id)
    if anonymous:
        hub = HubContext(resolve_endpoint(endpoint), None)
    else:
        hub = HubContext.create(endpoint=endpoint, token=token, action="read a dataset")
    api = hub.api
    with hub_call(hub, "read trajectories", repo_id=dataset, repo_type="dataset"):
        names = api.list_repo_files(dataset, repo_type="dataset", revision=revision)
        files = sorted(n for n in names if n.startswith("data/") and n.endswith(FORMATS))
        if not files:
            raise ConfigurationError(
                f"The dataset {dataset} has no trajectory files (data/*.jsonl or "
                "data/*.parquet); push some with `openenv record --push-to-hub`."
            )
        records: list[dict[str, Any]] = []
        for name in files[:MAX_DATASET_FILES]:
            local = api.hf_hub_download(dataset, name, repo_type="dataset", revision=revision)
            records.extend(read_records(local))
    return records
