"""Hub datasets as sources of environments: ``hf://datasets/NS/NAME[/ENV_ID][@REVISION]``
references, and a dataset's files at a commit on this machine.

Layer: services.
"""

from __future__ import annotations

import fcntl
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from openenv_hub.errors import ConfigurationError, HubError
from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._install import ensure_trusted
from openenv_hub.support.progress import report_progress
from openenv_hub.support.settings import cache_dir

__all__ = ["DATASET_PREFIX", "DatasetRef", "DatasetSource", "download_dataset", "parse_dataset_ref"]

DATASET_PREFIX = "hf://datasets/"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REF = re.compile(
    r"^(?P<repo>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)(?:/(?P<env>[A-Za-z0-9][\w.-]*))?"
    r"(?:@(?P<rev>[\w./-]+))?$"
)


@dataclass(frozen=True)
class DatasetRef:
    """A dataset, one of the environments its ``environment.yaml`` declares, and a revision."""

    repo_id: str
    environment_id: str | None = None
    revision: str | None = None

    def __str__(self) -> str:
        env = f"/{self.environment_id}" if self.environment_id else ""
        rev = f"@{self.revision}" if self.revision else ""
        return f"{DATASET_PREFIX}{self.repo_id}{env}{rev}"


@dataclass(frozen=True)
class DatasetSource:
    """The files of ``repo_id`` at ``commit``, in ``path``."""

    repo_id: str
    commit: str
    path: Path


def parse_dataset_ref(text: str) -> DatasetRef:
    """``hf://datasets/NS/NAME[/ENV_ID][@REVISION]`` as a :class:`DatasetRef`.

    Raises:
        ConfigurationError: ``text`` is not such a reference.
    """
    body = text[len(DATASET_PREFIX) :] if text.startswith(DATASET_PREFIX) else None
    found = _REF.match(body.strip("/")) if body is not None else None
    if found is None:
        raise ConfigurationError(
            f"{text!r} is not a dataset reference.",
            hint="Write it hf://datasets/NS/NAME, hf://datasets/NS/NAME/ENV_ID or with @REVISION.",
        )
    return DatasetRef(found["repo"], found["env"], found["rev"])


def download_dataset(
    ref: DatasetRef,
    *,
    into: Path | None = None,
    endpoint: str | None = None,
    token: str | None = None,
    runs_code: bool = False,
    trust_remote_code: bool = False,
) -> DatasetSource:
    """The dataset's files at ``ref.revision``, in ``into/NS/NAME/COMMIT`` (the cache unless
    given; downloaded once per commit). With ``runs_code``, only after the user's consent to
    run what it holds, asked for that exact commit.

    Raises:
        RemoteCodeNotTrustedError: ``runs_code`` and no consent.
        HubError: The dataset or revision does not exist, or the Hub did not answer.
    """
    ctx = HubContext.create(endpoint=endpoint, token=token)
    repo_id = ref.repo_id
    with hub_call(ctx, "read the dataset", repo_id=repo_id, repo_type="dataset"):
        info = ctx.api.dataset_info(repo_id, revision=ref.revision)
    commit = str(info.sha)
    if not _COMMIT.fullmatch(commit):  # it names a folder on this machine, removed and rewritten
        raise HubError(
            f"The Hub answered {repo_id}'s commit as {commit[:80]!r}, not 40 hex characters.",
            repo_id=repo_id,
            hint="Check the Hub endpoint (HF_ENDPOINT): this is not an answer of a Hub.",
        )
    if runs_code:
        ensure_trusted(
            repo_id,
            f"Run the environment of {ref} at {commit[:12]}",
            yes=trust_remote_code,
            kind="dataset",
        )
    root = into or cache_dir("datasets")
    source = DatasetSource(repo_id, commit, root / repo_id / commit)
    marker = source.path.with_name(f"{commit}.complete")
    source.path.parent.mkdir(parents=True, exist_ok=True)
    with open(source.path.with_name(f"{commit}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(source.path, ignore_errors=True)
            with (
                report_progress(f"dataset {repo_id} at {commit[:12]}", "downloading"),
                hub_call(ctx, "download the dataset", repo_id=repo_id, repo_type="dataset"),
            ):
                ctx.api.snapshot_download(
                    repo_id, repo_type="dataset", revision=commit, local_dir=source.path
                )
            shutil.rmtree(source.path / ".cache", ignore_errors=True)
            marker.write_text(commit)
    return source
