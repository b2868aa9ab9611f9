"""Threat: ``openenv push`` publishes what the author never meant to, to a public Space.

Every test pushes with the real ``openenv`` command and the real huggingface_hub client to
LocalHub, then reads what the Space's git repository holds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import space_files, unique_repo

from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv

SECRET = "BEGIN OPENSSH PRIVATE KEY: do-not-publish-4f9a"
SECRET_LOOKING = [
    "server.pem",
    "tls.key",
    "id_rsa",
    "id_ed25519.pub",
    "credentials-prod.json",
    "prod.env",
    ".envrc",
    "client.p12",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".pgpass",
    ".streamlit/secrets.toml",
    ".aws/credentials",
    "credentials",
    "kubeconfig",
    ".kube/config",
    ".vault-token",
    "terraform.tfstate",
    "putty.ppk",
    "release.jks",
    "keys/ID_RSA",  # any case: a key renamed on a file system that ignores case is still a key
    "server.PEM",
    "Deploy.Key",
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the environment, holding what must never be published."""
    folder = tmp_path / "home"
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_rsa").write_text(SECRET, encoding="utf-8")
    (folder / "notes.txt").write_text(SECRET, encoding="utf-8")
    return folder


@pytest.fixture
def risky_env(echo_copy: Path, outside: Path) -> Path:
    """The echo environment with links out of it, secret-looking files and .git files."""
    os.symlink(outside / ".ssh" / "id_rsa", echo_copy / "leaked_key")
    os.symlink(outside, echo_copy / "linked_home")
    os.symlink(echo_copy / "missing.txt", echo_copy / "dangling")
    for name in SECRET_LOOKING:
        (echo_copy / name).parent.mkdir(parents=True, exist_ok=True)
        (echo_copy / name).write_text(SECRET, encoding="utf-8")
    (echo_copy / "vendor" / "lib").mkdir(parents=True)
    (echo_copy / "vendor" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (echo_copy / "vendor" / "lib" / "lib.py").write_text("X = 1\n", encoding="utf-8")
    return echo_copy


LEFT_OUT = {
    "leaked_key": "a link to outside the folder (never followed)",
    "linked_home": "a link to outside the folder (never followed)",
    "dangling": "a broken link",
    "vendor/lib/.git": "a .git file (a submodule or worktree pointer; the Hub refuses it)",
    **{
        name: f"looks like a secret (--include-secret {name} uploads it)" for name in SECRET_LOOKING
    },
}


def _listed(out: str) -> dict[str, str]:
    """The ``Not uploaded:`` section of push's report, as ``{path: reason}``."""
    lines = out.split("Not uploaded:\n", 1)[1].splitlines()
    rows = [line.strip() for line in lines if line.startswith("  ")]
    return dict(row.split(": ", 1) for row in rows)


def test_dry_run_and_push_upload_no_link_out_no_secret_and_no_git_file_and_list_each(
    hub_env: HubEnv, risky_env: Path, cli: Callable[..., CliResult]
) -> None:
    """A link to ~/.ssh/id_rsa would publish the key; a secret-looking file would publish a
    credential; a .git file used to make the push fail after creating an empty Space."""
    repo_id = unique_repo(hub_env, "risky")
    dry = cli("push", risky_env, "--repo-id", repo_id, "--dry-run")
    assert dry.code == 0, dry.text
    assert _listed(dry.out) == LEFT_OUT
    plan = push(risky_env, repo_id, dry_run=True, bundle_wheel=False).plan
    assert not set(LEFT_OUT) & set(plan.files.added)
    assert "vendor/lib/lib.py" in plan.files.added
    assert not hub_env.api("alice").repo_exists(repo_id, repo_type="space")

    real = cli("push", risky_env, "--repo-id", repo_id)
    assert real.code == 0, real.text
    assert _listed(real.out) == LEFT_OUT
    files = space_files(hub_env, repo_id)
    assert not set(LEFT_OUT) & set(files)
    assert not [name for name in files if name.startswith(("linked_home/", "vendor/lib/.git"))]
    assert files["vendor/lib/lib.py"] == b"X = 1\n"
    assert not [name for name, data in files.items() if SECRET.encode() in data]


def test_a_link_inside_the_folder_is_uploaded_as_the_file_it_names(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    """A link may publish only what the folder publishes anyway: a link to a file that is left
    out (``.env``) would otherwise smuggle it out under another name."""
    (echo_copy / ".env").write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    os.symlink("README.md", echo_copy / "README_LINK.md")
    os.symlink(".env", echo_copy / "settings.txt")
    os.symlink("echo_env", echo_copy / "pkg_link")
    repo_id = unique_repo(hub_env, "inside")
    result = push(echo_copy, repo_id, bundle_wheel=False)
    files = space_files(hub_env, repo_id)
    assert files["README_LINK.md"] == (echo_copy / "README.md").read_bytes()
    assert "settings.txt" not in files and ".env" not in files
    assert not [name for name in files if name.startswith("pkg_link/")]
    reasons = {item.path: item.reason for item in result.plan.skipped}
    assert reasons == {
        "settings.txt": "a link to .env, which is not published",
        "pkg_link": "a link to a folder (not followed)",
    }


def test_include_secret_uploads_a_secret_looking_file_on_purpose(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    """Leaving secret-looking files out by default must not make a public key or a test
    certificate impossible to publish: the author names it on purpose."""
    (echo_copy / "certs").mkdir()
    (echo_copy / "certs" / "test-ca.pem").write_text("public test CA\n", encoding="utf-8")
    (echo_copy / "certs" / "server.key").write_text(SECRET, encoding="utf-8")
    repo_id = unique_repo(hub_env, "include")
    result = cli("push", echo_copy, "--repo-id", repo_id, "--include-secret", "certs/*.pem")
    assert result.code == 0, result.text
    files = space_files(hub_env, repo_id)
    assert files["certs/test-ca.pem"] == b"public test CA\n"
    assert "certs/server.key" not in files
    assert _listed(result.out) == {
        "certs/server.key": "looks like a secret (--include-secret certs/server.key uploads it)"
    }


def test_files_over_10_mb_are_announced_with_what_the_hub_does(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    """A large file must not fail the push half-way: the author hears before anything is sent
    that the Hub stores it with Xet (Git LFS)."""
    with open(echo_copy / "weights.bin", "wb") as out:
        out.truncate(11 * 1024 * 1024)
    result = cli("push", echo_copy, "--repo-id", unique_repo(hub_env, "large"), "--dry-run")
    assert result.code == 0, result.text
    assert "Warning: weights.bin is 11.5 MB" in result.err
    assert "Xet (Git LFS)" in result.err and "pointer" in result.err
    plan = push(echo_copy, unique_repo(hub_env, "large"), dry_run=True, bundle_wheel=False).plan
    assert "weights.bin" in plan.files.added
    assert [(item.path, item.size) for item in plan.large] == [("weights.bin", 11 * 1024 * 1024)]


# What else leaves the folder: hard links, other tools' logins, folders named in another case

LOGINS = [
    "gcloud/application_default_credentials.json",
    "client_secret.json",
    "client_secret_1234-abc.apps.googleusercontent.com.json",
    "service-account.json",
    "service_account-prod.json",
    ".docker/config.json",
    ".config/gh/hosts.yml",
    "deploy_key",
    "deploy_key.pub",
    ".huggingface/token",
]
TOOL_FOLDERS = [".Git/config", ".VENV/bin/python", "Node_Modules/x/index.js", "BUILD/lib.py"]


def test_a_hard_link_to_a_file_outside_the_folder_is_left_out_unless_asked(
    hub_env: HubEnv, echo_copy: Path, outside: Path, cli: Callable[..., CliResult]
) -> None:
    """``ln ~/notes.txt env/notes.txt`` makes the folder hold the outside file itself: no link
    to follow, and nothing in the folder says where its other name is."""
    os.link(outside / "notes.txt", echo_copy / "notes.txt")
    os.link(outside / ".ssh" / "id_rsa", echo_copy / "data.bin")
    reason = (
        "a hard link (the file has 2 names, and another may be outside the folder; "
        "--allow-hard-links uploads it)"
    )
    repo_id = unique_repo(hub_env, "hardlink")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert _listed(result.out) == {"data.bin": reason, "notes.txt": reason}
    files = space_files(hub_env, repo_id)
    assert "notes.txt" not in files and "data.bin" not in files
    assert not [name for name, data in files.items() if SECRET.encode() in data]

    asked = cli("push", echo_copy, "--repo-id", repo_id, "--allow-hard-links")
    assert asked.code == 0, asked.text
    assert space_files(hub_env, repo_id)["notes.txt"] == SECRET.encode()


def test_cloud_and_tool_logins_are_left_out(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    """gcloud's application default credentials, an OAuth client secret, a service account
    key, Docker's and GitHub's CLI logins, a deploy key, a Hub token file and Windows' netrc
    were published."""
    for name in [*LOGINS, "_netrc"]:
        (echo_copy / name).parent.mkdir(parents=True, exist_ok=True)
        (echo_copy / name).write_text(SECRET, encoding="utf-8")
    repo_id = unique_repo(hub_env, "logins")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert _listed(result.out) == {
        name: f"looks like a secret (--include-secret {name} uploads it)" for name in LOGINS
    }
    assert "_netrc" in push(echo_copy, repo_id, dry_run=True, bundle_wheel=False).plan.ignored
    files = space_files(hub_env, repo_id)
    assert not [name for name, data in files.items() if SECRET.encode() in data]


def test_tool_folders_named_in_another_case_are_left_out(hub_env: HubEnv, echo_copy: Path) -> None:
    """``.Git/`` and ``.VENV/`` are ``.git/`` and ``.venv/`` on macOS and Windows (file systems
    that ignore case), and went up whole."""
    for name in TOOL_FOLDERS:
        (echo_copy / name).parent.mkdir(parents=True, exist_ok=True)
        (echo_copy / name).write_text(SECRET, encoding="utf-8")
    repo_id = unique_repo(hub_env, "case")
    plan = push(echo_copy, repo_id, bundle_wheel=False).plan
    assert {".Git/", ".VENV/", "Node_Modules/", "BUILD/"} <= set(plan.ignored)
    files = space_files(hub_env, repo_id)
    assert not [name for name, data in files.items() if SECRET.encode() in data]
