"""Branches, tags and history, including revisions that contain a slash."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import hf_hub_download
from huggingface_hub.errors import HfHubHTTPError, RevisionNotFoundError

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory


def test_branch_with_slash(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files={"f.txt": "main"})
    api = hub_env.api("alice")
    api.create_branch(repo_id, branch="feat/x", repo_type="space")
    api.upload_file(
        path_or_fileobj=b"branch",
        path_in_repo="f.txt",
        repo_id=repo_id,
        repo_type="space",
        revision="feat/x",
    )
    path = hf_hub_download(repo_id, "f.txt", repo_type="space", revision="feat/x")
    assert Path(path).read_text() == "branch"
    files = api.list_repo_files(repo_id, repo_type="space", revision="feat/x")
    assert "f.txt" in files
    branches = {b.name for b in api.list_repo_refs(repo_id, repo_type="space").branches}
    assert branches == {"main", "feat/x"}

    with pytest.raises(HfHubHTTPError) as caught:
        api.create_branch(repo_id, branch="feat/x", repo_type="space")
    assert caught.value.response.status_code == 409
    api.delete_branch(repo_id, branch="feat/x", repo_type="space")
    with pytest.raises(RevisionNotFoundError):
        api.list_repo_files(repo_id, repo_type="space", revision="feat/x")


def test_main_cannot_be_deleted(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    with pytest.raises(HfHubHTTPError) as caught:
        hub_env.api("alice").delete_branch(make_space(), branch="main", repo_type="space")
    assert caught.value.response.status_code == 403


def test_branch_from_tag(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files={"f.txt": "1"})
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="release/1.0", repo_type="space")
    api.upload_file(path_or_fileobj=b"2", path_in_repo="f.txt", repo_id=repo_id, repo_type="space")
    api.create_branch(repo_id, branch="hotfix", revision="release/1.0", repo_type="space")
    path = hf_hub_download(repo_id, "f.txt", repo_type="space", revision="hotfix")
    assert Path(path).read_text() == "1"


def test_commit_to_tag_is_rejected(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="v1", repo_type="space")
    with pytest.raises(HfHubHTTPError) as caught:
        api.upload_file(
            path_or_fileobj=b"x",
            path_in_repo="x",
            repo_id=repo_id,
            repo_type="space",
            revision="v1",
        )
    assert caught.value.response.status_code == 400


def test_tag_errors(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    with pytest.raises(RevisionNotFoundError):
        api.create_tag(repo_id, tag="v1", revision="nope", repo_type="space")
    with pytest.raises(RevisionNotFoundError):
        api.delete_tag(repo_id, tag="never-created", repo_type="space")
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_tag(repo_id, tag="bad..name", repo_type="space")
    assert caught.value.response.status_code == 400
    with pytest.raises(HfHubHTTPError) as caught:
        hub_env.api("bob").create_tag(repo_id, tag="v9", repo_type="space")
    assert caught.value.response.status_code == 403


def test_commit_history(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    for index in range(3):
        api.upload_file(
            path_or_fileobj=str(index).encode(),
            path_in_repo="n.txt",
            repo_id=repo_id,
            repo_type="space",
            commit_message=f"step {index}",
        )
    commits = api.list_repo_commits(repo_id, repo_type="space")
    assert [c.title for c in commits] == ["step 2", "step 1", "step 0", "initial commit"]
    assert commits[0].created_at.tzinfo is not None
    older = api.list_repo_commits(repo_id, repo_type="space", revision=commits[2].commit_id)
    assert [c.title for c in older] == ["step 0", "initial commit"]
    short = api.space_info(repo_id, revision=commits[1].commit_id[:10]).sha
    assert short == commits[1].commit_id
