"""``download_space``: a Space's files at one commit, downloaded once, the download reported as
a wait (its stage names how many files)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hub_support import unique_repo

from openenv_hub.hub import download_space, push
from openenv_hub.testing.pytest_plugin import HubEnv


def test_the_download_is_reported_with_its_number_of_files(
    hub_env: HubEnv, echo_copy: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    repo_id = unique_repo(hub_env, "download")
    push(echo_copy, repo_id)
    files = hub_env.api("alice").list_repo_files(repo_id, repo_type="space")
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    source = download_space(repo_id, None, into=tmp_path / "spaces", trust_remote_code=True)
    assert sorted(
        p.relative_to(source.path).as_posix() for p in source.path.rglob("*") if p.is_file()
    ) == sorted(files)
    task = f"Space {repo_id} at {source.commit[:12]}"
    waits = [(r.task, r.stage) for r in caplog.records]  # type: ignore[attr-defined]
    assert waits == [(task, f"downloading {len(files)} files"), (task, "done")]
    caplog.clear()
    download_space(repo_id, None, into=tmp_path / "spaces", trust_remote_code=True)
    assert caplog.records == []  # that commit is here already: nothing to wait for
