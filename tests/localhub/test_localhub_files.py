"""Uploading, listing and downloading files, and the errors the client maps."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationDelete,
    DatasetInfo,
    ModelInfo,
    RepoFile,
    hf_hub_download,
)
from huggingface_hub.errors import (
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory

FILES = {"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c"}


def test_tree_listing(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files=FILES)
    api = hub_env.api("alice")
    top = {e.path: type(e).__name__ for e in api.list_repo_tree(repo_id, repo_type="space")}
    assert top == {
        ".gitattributes": "RepoFile",
        "README.md": "RepoFile",
        "a.txt": "RepoFile",
        "dir": "RepoFolder",
    }
    nested = list(api.list_repo_tree(repo_id, "dir", recursive=True, repo_type="space"))
    assert sorted(e.path for e in nested) == ["dir/b.txt", "dir/sub", "dir/sub/c.txt"]
    file = next(e for e in nested if e.path == "dir/b.txt")
    assert isinstance(file, RepoFile)
    assert file.size == 1 and len(file.blob_id) == 40

    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(repo_id, "missing", repo_type="space"))


@pytest.mark.parametrize("flag", ["true", "True", "1"])
def test_tree_recursive_flag_spellings(
    hub_env: HubEnv, make_space: SpaceFactory, flag: str
) -> None:
    repo_id = make_space(files=FILES)
    url = f"{hub_env.endpoint}/api/spaces/{repo_id}/tree/main?recursive={flag}"
    paths = {entry["path"] for entry in httpx.get(url).json()}
    assert "dir/sub/c.txt" in paths


def test_unchanged_upload_creates_no_commit(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files={"same.txt": "same"})
    api = hub_env.api("alice")
    before = api.space_info(repo_id).sha
    api.upload_file(
        path_or_fileobj=b"same", path_in_repo="same.txt", repo_id=repo_id, repo_type="space"
    )
    assert api.space_info(repo_id).sha == before


def test_commit_with_deletions(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files=FILES)
    api = hub_env.api("alice")
    api.create_commit(
        repo_id,
        [
            CommitOperationDelete("dir/"),
            CommitOperationDelete("a.txt"),
            CommitOperationAdd("new.txt", b"new"),
        ],
        commit_message="reshape",
        commit_description="details",
        repo_type="space",
    )
    assert api.list_repo_files(repo_id, repo_type="space") == [
        ".gitattributes",
        "README.md",
        "new.txt",
    ]
    last = api.list_repo_commits(repo_id, repo_type="space")[0]
    assert (last.title, last.message, last.authors) == ("reshape", "details", ["alice"])

    with pytest.raises(RemoteEntryNotFoundError):
        api.delete_file("a.txt", repo_id, repo_type="space")


def test_parent_commit_mismatch_is_412(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    first = api.space_info(repo_id).sha
    api.upload_file(path_or_fileobj=b"1", path_in_repo="x", repo_id=repo_id, repo_type="space")
    with pytest.raises(HfHubHTTPError) as caught:
        api.upload_file(
            path_or_fileobj=b"2",
            path_in_repo="y",
            repo_id=repo_id,
            repo_type="space",
            parent_commit=first,
        )
    assert caught.value.response.status_code == 412


def test_typed_errors(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files={"a.txt": "a"})
    api = hub_env.api("alice")
    with pytest.raises(RepositoryNotFoundError):
        api.space_info("alice/does-not-exist")
    with pytest.raises(RevisionNotFoundError):
        api.space_info(repo_id, revision="nope")
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(repo_id, "a.txt", repo_type="space", revision="nope")
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(repo_id, "missing.txt", repo_type="space")
    assert api.file_exists(repo_id, "a.txt", repo_type="space")
    assert not api.file_exists(repo_id, "b.txt", repo_type="space")
    assert not api.repo_exists("alice/does-not-exist", repo_type="space")


def test_paths_info(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files=FILES)
    infos = hub_env.api("alice").get_paths_info(
        repo_id, ["a.txt", "dir", "missing"], repo_type="space"
    )
    assert {(type(i).__name__, i.path) for i in infos} == {
        ("RepoFile", "a.txt"),
        ("RepoFolder", "dir"),
    }


def test_copy_operation(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    from huggingface_hub import CommitOperationCopy

    repo_id = make_space(files={"a.txt": "a"})
    api = hub_env.api("alice")
    api.create_commit(
        repo_id,
        [CommitOperationCopy("a.txt", "copy.txt")],
        commit_message="copy",
        repo_type="space",
    )
    path = hf_hub_download(repo_id, "copy.txt", repo_type="space")
    assert Path(path).read_text() == "a"


def test_models_and_datasets(hub_env: HubEnv, tmp_path: Path) -> None:
    api = hub_env.api("alice")
    for repo_type in ("model", "dataset"):
        repo_id = hub_env.repo_id(repo_type)
        api.create_repo(repo_id, repo_type=repo_type)
        api.upload_file(
            path_or_fileobj=b"w", path_in_repo="w.txt", repo_id=repo_id, repo_type=repo_type
        )
        path = hf_hub_download(repo_id, "w.txt", repo_type=repo_type, cache_dir=tmp_path)
        assert Path(path).read_text() == "w"
        info = api.repo_info(repo_id, repo_type=repo_type, files_metadata=True)
        assert isinstance(info, (ModelInfo, DatasetInfo))
        sizes = {s.rfilename: s.size for s in info.siblings or []}
        assert sizes == {".gitattributes": sizes[".gitattributes"], "w.txt": 1}
        api.delete_repo(repo_id, repo_type=repo_type)
        api.delete_repo(repo_id, repo_type=repo_type, missing_ok=True)
        assert not api.repo_exists(repo_id, repo_type=repo_type)


def test_invalid_readme_metadata_is_rejected(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    with pytest.raises(ValueError, match="Invalid metadata"):
        hub_env.api("alice").upload_file(
            path_or_fileobj=b"---\nsdk: [unclosed\n---\n",
            path_in_repo="README.md",
            repo_id=repo_id,
            repo_type="space",
        )


def _post_commit(hub_env: HubEnv, repo_id: str, lines: list[dict[str, Any]]) -> httpx.Response:
    body = "\n".join(json.dumps(line) for line in lines)
    return httpx.post(
        f"{hub_env.endpoint}/api/spaces/{repo_id}/commit/main",
        content=body,
        headers={
            "authorization": f"Bearer {hub_env.hub.token_for('alice')}",
            "content-type": "application/x-ndjson",
        },
    )


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        (
            [
                {"key": "header", "value": {"summary": "x"}},
                {"key": "lfsFile", "value": {"path": "b"}},
            ],
            400,
        ),
        ([{"key": "file", "value": {"path": "a", "content": "", "encoding": "base64"}}], 400),
        ([{"key": "header", "value": {"summary": "x"}}, {"key": "bogus", "value": {}}], 400),
        (
            [
                {"key": "header", "value": {"summary": "x"}},
                {"key": "file", "value": {"path": "../evil", "content": "", "encoding": "base64"}},
            ],
            400,
        ),
    ],
    ids=["lfs", "no-header", "unknown-key", "path-traversal"],
)
def test_bad_commits_are_client_errors(
    hub_env: HubEnv, make_space: SpaceFactory, lines: list[dict[str, Any]], status: int
) -> None:
    response = _post_commit(hub_env, make_space(), lines)
    assert response.status_code == status
    assert "error" in response.json()


def test_raw_commit_and_range_download(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    content = base64.b64encode(b"0123456789").decode()
    response = _post_commit(
        hub_env,
        repo_id,
        [
            {"key": "header", "value": {"summary": "digits"}},
            {"key": "file", "value": {"path": "d.txt", "content": content, "encoding": "base64"}},
        ],
    )
    assert response.status_code == 200
    sha = response.json()["commitOid"]
    url = f"{hub_env.endpoint}/spaces/{repo_id}/resolve/{sha}/d.txt"
    partial = httpx.get(url, headers={"range": "bytes=2-4"})
    assert (partial.status_code, partial.content) == (206, b"234")
    assert partial.headers["content-range"] == "bytes 2-4/10"
    assert httpx.get(url, headers={"range": "bytes=20-"}).status_code == 416
    head = httpx.head(url)
    assert head.headers["x-repo-commit"] == sha
    assert head.headers["content-length"] == "10"


@pytest.mark.parametrize(
    "path",
    [
        "/api/spaces/{repo}/tree/main/%2E%2E%2Fx",
        "/spaces/{repo}/resolve/main/%2E%2E%2Fx",
        "/spaces/{repo}/resolve/main/%2Fetc%2Fpasswd",
    ],
)
def test_paths_outside_the_tree_are_not_found(
    hub_env: HubEnv, make_space: SpaceFactory, path: str
) -> None:
    url = hub_env.endpoint + path.format(repo=make_space())
    response = httpx.get(url)
    assert response.status_code == 404
    assert response.headers["x-error-code"] == "EntryNotFound"


def test_unicode_and_space_in_paths(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    name = "données/mon fichier é.txt"
    repo_id = make_space(files={name: "ça marche"})
    assert name in hub_env.api("alice").list_repo_files(repo_id, repo_type="space")
    assert Path(hf_hub_download(repo_id, name, repo_type="space")).read_text() == "ça marche"
