"""A Space's files at the commit a revision names, on this machine, for running them here.

The files are downloaded once per commit (two processes asking at once download them once) and
only with the user's consent to run the Space's code (``trust_remote_code=True``,
``OPENENV_TRUST_REMOTE_CODE=1``, or a "yes" at a terminal), asked for that exact commit.
"""

from __future__ import annotations

import fcntl
import shutil
from dataclasses import dataclass
from pathlib import Path

from openenv_hub.hub._client import HubContext
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._install import ensure_trusted
from openenv_hub.hub._reads import find_space
from openenv_hub.support.progress import report_progress

__all__ = ["SpaceSource", "download_space"]


@dataclass(frozen=True)
class SpaceSource:
    """The files of ``repo_id`` at ``commit``, in ``path``."""

    repo_id: str
    commit: str
    path: Path


def download_space(
    repo_id: str,
    revision: str | None,
    *,
    into: Path,
    endpoint: str | None = None,
    token: str | None = None,
    trust_remote_code: bool = False,
) -> SpaceSource:
    """The Space's files at ``revision``, in ``into/NAMESPACE/NAME/COMMIT`` (downloaded once
    per commit, after consent).

    Raises:
        RemoteCodeNotTrustedError: No consent to run the Space's code.
        HubError: The Space or revision does not exist, or the Hub did not answer.
    """
    ctx = HubContext.create(endpoint=endpoint, token=token)
    info = find_space(ctx, repo_id, revision)
    commit, files = str(info.sha), len(info.siblings or ())
    ensure_trusted(repo_id, f"Run {repo_id} at {commit[:12]}", yes=trust_remote_code)
    source = SpaceSource(repo_id, commit, into / repo_id / commit)
    marker = source.path.with_name(f"{commit}.complete")
    source.path.parent.mkdir(parents=True, exist_ok=True)
    with open(source.path.with_name(f"{commit}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.is_file():
            shutil.rmtree(source.path, ignore_errors=True)
            with (
                report_progress(f"Space {repo_id} at {commit[:12]}", f"downloading {files} files"),
                hub_call(ctx, "download the Space", repo_id=repo_id),
            ):
                ctx.api.snapshot_download(
                    repo_id, repo_type="space", revision=commit, local_dir=source.path
                )
            shutil.rmtree(source.path / ".cache", ignore_errors=True)
            marker.write_text(commit)
    return source
