"""Pure pieces of LocalHub, tested without a server."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from openenv_hub.localhub.auth import DEMO_TOKENS, TokenRegistry, User, token_from_header
from openenv_hub.localhub.commit_body import parse_commit_payload
from openenv_hub.localhub.errors import HubError
from openenv_hub.localhub.git_http import match_git_path, parse_cgi_output
from openenv_hub.localhub.gitops import (
    Author,
    DeletePath,
    PutFile,
    apply_edits,
    commit_files,
    normalize_path,
)
from openenv_hub.localhub.gitrepo import GitRepo, git_environment
from openenv_hub.localhub.payloads import FrontMatterError, parse_front_matter
from openenv_hub.localhub.requestlog import RequestLog, RequestRecord
from openenv_hub.localhub.space_images import wheelhouse_tag
from openenv_hub.localhub.storage import RepoKey, RepoMeta

ENTRIES = {"a.txt": ("100644", "1" * 40), "dir/b.txt": ("100755", "2" * 40)}


def test_apply_edits_adds_replaces_and_deletes() -> None:
    result = apply_edits(
        ENTRIES, [("new.txt", "3" * 40), ("dir/b.txt", "4" * 40), DeletePath("a.txt")]
    )
    assert result == {"new.txt": ("100644", "3" * 40), "dir/b.txt": ("100755", "4" * 40)}
    assert apply_edits(ENTRIES, [DeletePath("dir", folder=True)]) == {"a.txt": ENTRIES["a.txt"]}


@pytest.mark.parametrize(
    ("edit", "status"),
    [
        (DeletePath("missing"), 404),
        (DeletePath("a.txt", folder=True), 404),
        (("a.txt/child", "5" * 40), 400),
        (("dir", "5" * 40), 400),
    ],
)
def test_apply_edits_errors(edit: object, status: int) -> None:
    with pytest.raises(HubError) as caught:
        apply_edits(ENTRIES, [edit], commit="c" * 40)  # type: ignore[list-item]
    assert caught.value.status == status


@pytest.mark.parametrize("path", ["", "/", "a/../b", "./a", ".git/config", "a//b", "x\ny"])
def test_normalize_path_rejects(path: str) -> None:
    with pytest.raises(HubError):
        normalize_path(path)


def test_normalize_path_strips_slashes() -> None:
    assert normalize_path("/dir/file.txt/") == "dir/file.txt"


def test_commit_payload_parsing() -> None:
    lines = [
        {"key": "header", "value": {"summary": "s", "description": "d", "parentCommit": "abc"}},
        {"key": "file", "value": {"path": "f", "content": base64.b64encode(b"hi").decode()}},
        {"key": "deletedFolder", "value": {"path": "old/"}},
    ]
    payload = parse_commit_payload("\n".join(json.dumps(line) for line in lines).encode())
    assert payload.message == "s\n\nd"
    assert payload.parent_commit == "abc"
    assert payload.operations == [PutFile("f", b"hi"), DeletePath("old/", folder=True)]
    with pytest.raises(HubError):
        parse_commit_payload(b"not json")


def test_front_matter() -> None:
    assert parse_front_matter("---\nsdk: docker\ntags: [a]\n---\nbody") == {
        "sdk": "docker",
        "tags": ["a"],
    }
    assert parse_front_matter("# no metadata") is None
    assert parse_front_matter("---\n---\n") == {}
    with pytest.raises(FrontMatterError):
        parse_front_matter("---\n- a list\n---\n")


def test_tokens() -> None:
    registry = TokenRegistry(DEMO_TOKENS)
    basic = "Basic " + base64.b64encode(b"alice:hf_alice_write").decode()
    assert registry.authenticate(basic) == User("alice", ("org",), "write")
    assert registry.authenticate("Bearer hf_bob_write") == User("bob")
    assert registry.authenticate(None) is None
    with pytest.raises(HubError):
        registry.authenticate("Bearer nope")
    with pytest.raises(HubError):
        registry.authenticate("Basic !!!")
    assert token_from_header("Basic " + base64.b64encode(b"hf_x:").decode()) == "hf_x"
    with pytest.raises(ValueError, match="role"):
        TokenRegistry({"t": {"name": "x", "role": "admin"}})


def test_user_rights() -> None:
    alice = User("alice", orgs=("org",), role="read")
    assert alice.can_see("org") and not alice.can_write("org")
    assert not User("bob").can_see("org")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/spaces/org/env/info/refs", ("space", "org/env", "info/refs")),
        ("/spaces/org/env.git/git-upload-pack", ("space", "org/env", "git-upload-pack")),
        ("/datasets/org/d/git-receive-pack", ("dataset", "org/d", "git-receive-pack")),
        ("/alice/model.git/info/refs", ("model", "alice/model", "info/refs")),
        ("/api/spaces/org/env", None),
        ("/spaces/org/env/resolve/main/info/refs", None),
    ],
)
def test_match_git_path(path: str, expected: tuple[str, str, str] | None) -> None:
    route = match_git_path(path)
    found = (route.key.type, route.key.repo_id, route.action) if route else None
    assert found == expected


def test_parse_cgi_output() -> None:
    status, headers, body = parse_cgi_output(b"Status: 403 Forbidden\r\nX-A: 1\r\n\r\nno")
    assert (status, headers, body) == (403, {"X-A": "1"}, b"no")
    assert parse_cgi_output(b"Content-Type: x\n\nbody") == (200, {"Content-Type": "x"}, b"body")


def test_repo_key_rules() -> None:
    assert RepoKey.parse("space", "org/env").web_path == "spaces/org/env"
    assert RepoKey.parse("model", "org/m").web_path == "org/m"
    assert not RepoKey("space", "org", "a--b").is_valid()
    assert not RepoKey("space", "_localhub", "x").is_valid()
    with pytest.raises(HubError):
        RepoKey.parse("bucket", "a/b")
    with pytest.raises(HubError):
        RepoKey.parse("model", "no-namespace")


def test_meta_round_trip() -> None:
    meta = RepoMeta(private=True, sdk="docker", next_stages=["RUNNING"])
    assert RepoMeta.from_json(meta.to_json()) == meta


def test_request_log_is_bounded() -> None:
    log = RequestLog(max_entries=2)
    for index in range(3):
        log.record(RequestRecord("GET", "h", f"/{index}", "", 200, 0.1))
    assert [entry["path"] for entry in log.entries()] == ["/1", "/2"]
    log.clear()
    assert log.entries() == []


@pytest.fixture
def bare_repo(tmp_path: Path) -> GitRepo:
    path = tmp_path / "r.git"
    subprocess.run(
        ["git", "init", "-q", "--bare", "--initial-branch=main", str(path)],
        env=git_environment(),
        check=True,
    )
    return GitRepo(path)


def test_revision_resolution(bare_repo: GitRepo) -> None:
    author = Author.for_user("alice")
    first = commit_files(
        bare_repo, "main", [PutFile("a", b"1")], message="one", author=author, create_branch=True
    )
    bare_repo.run("update-ref", "refs/tags/main", first)
    second = commit_files(bare_repo, "main", [PutFile("a", b"2")], message="two", author=author)
    assert bare_repo.resolve("main") == second, "branches win over tags"
    assert bare_repo.resolve("refs/tags/main") == first
    assert bare_repo.resolve(first[:8]) == first
    for bad in ("main~1", "main^", "-h", "a..b", "HEAD@{0}", ""):
        assert bare_repo.resolve(bad) is None
    with pytest.raises(HubError) as caught:
        commit_files(bare_repo, "main", [], message="x", author=author, parent_commit=first)
    assert caught.value.status == 412


def test_the_wheelhouse_tag_follows_each_wheels_content(tmp_path: Path) -> None:
    wheel = tmp_path / "openenv_hub-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"first build")
    first = wheelhouse_tag("python:3.11-slim", [wheel])
    assert wheelhouse_tag("python:3.11-slim", [wheel]) == first
    wheel.write_bytes(b"other build")  # rebuilt: same name, same size
    assert wheelhouse_tag("python:3.11-slim", [wheel]) != first
    assert wheelhouse_tag("python:3.12-slim", [wheel]) != wheelhouse_tag(
        "python:3.11-slim", [wheel]
    )
