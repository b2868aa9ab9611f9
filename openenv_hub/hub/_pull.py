"""``pull``: a local, editable copy of a Space's environment.

The files are downloaded into a temporary folder next to ``dest`` and moved into place only when
the download is complete, so a failure leaves nothing behind. The folder remembers the Space it
came from (:mod:`~openenv_hub.hub._target`), so that ``push`` goes back there.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from openenv_hub.errors import DestinationNotEmptyError
from openenv_hub.hub._client import HubContext, hf, parse_repo_id
from openenv_hub.hub._errors import hub_call
from openenv_hub.hub._target import remember_pull

__all__ = ["pull"]


def pull(
    repo_id: str,
    dest: str | Path | None = None,
    *,
    revision: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
) -> Path:
    """Download the Space ``repo_id`` (at ``revision``) into ``dest`` (default ``./NAME``).

    The folder remembers ``repo_id``: a ``push`` of it without a ``repo_id`` goes there.

    Raises:
        DestinationNotEmptyError: ``dest`` exists and is not an empty folder.
        SpaceNotFoundError, RevisionNotFoundError, HubConnectionError: From the Hub.
    """
    rid = parse_repo_id(repo_id)
    target = Path(dest) if dest is not None else Path(rid.name)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise DestinationNotEmptyError(str(target))
    ctx = HubContext.create(endpoint=endpoint, token=token)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{rid.name}-pull-") as tmp:
        staging = Path(tmp) / "files"
        with hub_call(ctx, "download the Space", repo_id=str(rid), revision=revision):
            _download(str(rid), revision, staging, ctx)
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
        remember_pull(staging, endpoint=ctx.endpoint, repo_id=str(rid), revision=revision)
        if target.is_dir():
            target.rmdir()  # empty: checked above
        os.replace(staging, target)
    return target.resolve()


def _download(repo_id: str, revision: str | None, staging: Path, ctx: HubContext) -> None:
    """``snapshot_download`` into ``staging``, without the client's own progress bars."""
    hub = hf()
    bars = hub.utils.are_progress_bars_disabled()
    hub.utils.disable_progress_bars()
    try:
        hub.snapshot_download(
            repo_id,
            repo_type="space",
            revision=revision,
            local_dir=staging,
            endpoint=ctx.endpoint,
            token=ctx.token or False,
        )
    finally:
        if not bars:
            hub.utils.enable_progress_bars()
