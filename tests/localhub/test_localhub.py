"""End-to-end Space workflow against LocalHub with the real huggingface_hub client."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import hf_hub_download, snapshot_download
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory


def _write_tree(root: Path, files: dict[str, str]) -> Path:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    return root


ENV_FILES = {
    "Dockerfile": "FROM python:3.11-slim\n",
    "README.md": "---\ntitle: Echo\nsdk: docker\napp_port: 8000\n---\n# Echo env\n",
    "server/app.py": "print('hello')\n",
    "server/old.py": "OLD = True\n",
}


def test_space_round_trip(hub_env: HubEnv, tmp_path: Path) -> None:
    api = hub_env.api("alice")
    repo_id = hub_env.repo_id("echo", namespace="org")
    url = api.create_repo(repo_id, repo_type="space", space_sdk="docker")
    assert url == f"{hub_env.endpoint}/spaces/{repo_id}"
    assert url.repo_id == repo_id

    folder = _write_tree(tmp_path / "v1", ENV_FILES)
    first = api.upload_folder(repo_id=repo_id, folder_path=folder, repo_type="space")
    assert first.oid in first.commit_url
    assert api.list_repo_files(repo_id, repo_type="space") == [
        ".gitattributes",
        "Dockerfile",
        "README.md",
        "server/app.py",
        "server/old.py",
    ]

    (folder / "server" / "old.py").unlink()
    (folder / "server" / "app.py").write_text("print('v2')\n")
    api.upload_folder(
        repo_id=repo_id, folder_path=folder, repo_type="space", delete_patterns="server/*"
    )
    files = api.list_repo_files(repo_id, repo_type="space")
    assert "server/old.py" not in files
    assert "server/app.py" in files

    info = api.space_info(repo_id)
    assert info.sdk == "docker"
    assert info.runtime is not None and info.runtime.stage == "STOPPED"  # no runtime: no app
    assert info.card_data is not None and info.card_data.get("app_port") == 8000

    downloaded = hf_hub_download(repo_id, "server/app.py", repo_type="space")
    assert Path(downloaded).read_text() == "print('v2')\n"
    old = hf_hub_download(repo_id, "server/old.py", repo_type="space", revision=first.oid)
    assert Path(old).read_text() == "OLD = True\n"

    snapshot = Path(snapshot_download(repo_id, repo_type="space", local_dir=tmp_path / "snap"))
    assert (snapshot / "Dockerfile").read_text() == ENV_FILES["Dockerfile"]
    assert not (snapshot / "server" / "old.py").exists()


def test_private_space_is_invisible_without_access(
    hub_env: HubEnv, make_space: SpaceFactory
) -> None:
    repo_id = make_space(private=True, files={"secret.txt": "s3cret"})
    alice, bob = hub_env.api("alice"), hub_env.api("bob")
    assert alice.space_info(repo_id).private is True

    with pytest.raises(RepositoryNotFoundError):
        bob.space_info(repo_id)
    with pytest.raises(RepositoryNotFoundError):
        hf_hub_download(repo_id, "secret.txt", repo_type="space", token=False)
    assert not hub_env.api().repo_exists(repo_id, repo_type="space", token=False)
    assert alice.repo_exists(repo_id, repo_type="space")


def test_org_members_see_org_private_repos(hub_env: HubEnv) -> None:
    api = hub_env.api("alice")
    repo_id = hub_env.repo_id("private", namespace="org")
    api.create_repo(repo_id, repo_type="space", space_sdk="docker", private=True)
    reader = hub_env.api("alice", role="read")
    assert reader.space_info(repo_id).id == repo_id
    with pytest.raises(RepositoryNotFoundError):
        hub_env.api("bob").space_info(repo_id)


@pytest.mark.parametrize(
    ("user", "role", "namespace"),
    [("bob", "write", "alice"), ("bob", "write", "org"), ("alice", "read", "alice")],
)
def test_writes_outside_own_rights_are_forbidden(
    hub_env: HubEnv, user: str, role: str, namespace: str
) -> None:
    api = hub_env.api(user, role=role)  # type: ignore[arg-type]
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_repo(hub_env.repo_id("x", namespace), repo_type="space", space_sdk="docker")
    assert caught.value.response.status_code == 403


def test_bob_cannot_upload_to_alices_space(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    with pytest.raises(HfHubHTTPError) as caught:
        hub_env.api("bob").upload_file(
            path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=repo_id, repo_type="space"
        )
    assert caught.value.response.status_code == 403


def test_duplicate_space_copies_files_history_and_variables(
    hub_env: HubEnv, make_space: SpaceFactory
) -> None:
    source = make_space(private=True, files={"app.py": "print(1)\n"})
    alice = hub_env.api("alice")
    alice.add_space_variable(source, "MODE", "fast")
    alice.add_space_secret(source, "API_KEY", "not-copied")

    target = hub_env.repo_id("copy", namespace="org")
    url = alice.duplicate_repo(
        source, target, repo_type="space", space_secrets=[{"key": "NEW", "value": "1"}]
    )
    assert url.repo_id == target
    info = alice.space_info(target)
    assert info.private is True
    assert {s.rfilename for s in info.siblings or []} >= {"app.py", "README.md"}
    source_log = [c.commit_id for c in alice.list_repo_commits(source, repo_type="space")]
    target_log = [c.commit_id for c in alice.list_repo_commits(target, repo_type="space")]
    assert target_log == source_log
    assert alice.get_space_variables(target)["MODE"].value == "fast"
    assert set(alice.get_space_secrets(target)) == {"NEW"}

    public = hub_env.repo_id("public-copy", namespace="org")
    alice.duplicate_repo(source, public, repo_type="space", private=False)
    assert alice.space_info(public).private is False


def test_duplicate_into_existing_repo(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    source, target = make_space(), make_space()
    alice = hub_env.api("alice")
    with pytest.raises(HfHubHTTPError) as caught:
        alice.duplicate_repo(source, target, repo_type="space")
    assert caught.value.response.status_code == 409
    url = alice.duplicate_repo(source, target, repo_type="space", exist_ok=True)
    assert url.repo_id == target


def test_secrets_and_variables(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space()
    api = hub_env.api("alice")
    api.add_space_secret(repo_id, "TOKEN", "value", description="a token")
    api.add_space_variable(repo_id, "LEVEL", "3", description="difficulty")
    secrets = api.get_space_secrets(repo_id)
    assert secrets["TOKEN"].description == "a token"
    assert not hasattr(secrets["TOKEN"], "value")
    assert api.get_space_variables(repo_id)["LEVEL"].value == "3"

    api.delete_space_secret(repo_id, "TOKEN")
    api.delete_space_variable(repo_id, "LEVEL")
    assert api.get_space_secrets(repo_id) == {}
    assert api.get_space_variables(repo_id) == {}

    with pytest.raises(HfHubHTTPError) as caught:
        hub_env.api("bob").add_space_secret(repo_id, "X", "y")
    assert caught.value.response.status_code == 403


def test_tag_then_download_at_tag(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    repo_id = make_space(files={"version.txt": "1"})
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="v1", repo_type="space")
    api.create_tag(repo_id, tag="v1-annotated", tag_message="first release", repo_type="space")
    api.upload_file(
        path_or_fileobj=b"2", path_in_repo="version.txt", repo_id=repo_id, repo_type="space"
    )

    refs = api.list_repo_refs(repo_id, repo_type="space")
    tags = {tag.name: tag.target_commit for tag in refs.tags}
    head = api.space_info(repo_id).sha
    assert set(tags) == {"v1", "v1-annotated"}
    assert tags["v1"] == tags["v1-annotated"] != head
    assert [branch.name for branch in refs.branches] == ["main"]

    for tag in tags:
        path = hf_hub_download(repo_id, "version.txt", repo_type="space", revision=tag)
        assert Path(path).read_text() == "1"
    assert api.space_info(repo_id, revision="v1").sha == tags["v1"]

    with pytest.raises(HfHubHTTPError) as caught:
        api.create_tag(repo_id, tag="v1", repo_type="space")
    assert caught.value.response.status_code == 409
    api.create_tag(repo_id, tag="v1", repo_type="space", exist_ok=True)

    api.delete_tag(repo_id, tag="v1", repo_type="space")
    assert [t.name for t in api.list_repo_refs(repo_id, repo_type="space").tags] == ["v1-annotated"]
