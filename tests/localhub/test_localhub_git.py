"""Git smart-HTTP: clone, fetch and push with real git, and pip installs from a tag."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import hf_hub_download

from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory


def git(
    *args: str, cwd: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run git isolated from the user's configuration and credential helpers."""
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    identity = ["-c", "user.name=Tester", "-c", "user.email=tester@example.invalid"]
    proc = subprocess.run(
        ["git", *identity, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed:\n{proc.stderr}")
    return proc


def _commit_file(clone: Path, name: str, content: bytes | str) -> None:
    path = clone / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    git("add", name, cwd=clone)
    git("commit", "-q", "-m", f"add {name}", cwd=clone)


@pytest.mark.parametrize("suffix", ["", ".git"])
def test_clone_public_space(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path, suffix: str
) -> None:
    repo_id = make_space(files={"app.py": "print(1)\n"})
    clone = tmp_path / "clone"
    git("clone", "-q", hub_env.hub.git_url(repo_id) + suffix, str(clone))
    assert (clone / "app.py").read_text() == "print(1)\n"
    log = git("log", "--format=%s", cwd=clone).stdout.split("\n")
    assert log[:2] == ["add files", "initial commit"]


def test_push_with_token_is_visible_through_the_api(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path
) -> None:
    repo_id = make_space()
    clone = tmp_path / "clone"
    git(
        "clone",
        "-q",
        hub_env.hub.git_url(repo_id, token=hub_env.hub.token_for("alice")),
        str(clone),
    )
    _commit_file(clone, "pushed.txt", "over git")
    _commit_file(clone, "big.bin", os.urandom(3 * 1024 * 1024))
    git("tag", "v2", cwd=clone)
    git("push", "-q", "origin", "main", "v2", cwd=clone)

    api = hub_env.api("alice")
    head = git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    assert api.space_info(repo_id).sha == head
    assert api.list_repo_commits(repo_id, repo_type="space")[0].title == "add big.bin"
    assert {t.name for t in api.list_repo_refs(repo_id, repo_type="space").tags} == {"v2"}
    path = hf_hub_download(repo_id, "pushed.txt", repo_type="space", revision="v2")
    assert Path(path).read_text() == "over git"


@pytest.mark.parametrize(
    ("credentials", "expected"),
    [
        (None, "could not read Username"),
        ("bob", "403"),
        ("alice-read", "403"),
        ("invalid", "Authentication failed"),
    ],
)
def test_push_without_rights_is_rejected(
    hub_env: HubEnv,
    make_space: SpaceFactory,
    tmp_path: Path,
    credentials: str | None,
    expected: str,
) -> None:
    repo_id = make_space()
    clone = tmp_path / "clone"
    git("clone", "-q", hub_env.hub.git_url(repo_id), str(clone))
    _commit_file(clone, "nope.txt", "nope")
    tokens = {
        "bob": hub_env.hub.token_for("bob"),
        "alice-read": hub_env.hub.token_for("alice", "read"),
        "invalid": "hf_invalid",
    }
    url = hub_env.hub.git_url(repo_id, token=tokens.get(credentials or ""))
    result = git("push", url, "main", cwd=clone, check=False)
    assert result.returncode != 0
    assert expected in result.stderr
    assert "nope.txt" not in hub_env.api("alice").list_repo_files(repo_id, repo_type="space")


def test_private_clone_needs_credentials(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path
) -> None:
    repo_id = make_space(private=True, files={"s.txt": "s"})
    anonymous = git("clone", "-q", hub_env.hub.git_url(repo_id), str(tmp_path / "a"), check=False)
    assert anonymous.returncode != 0
    assert "could not read Username" in anonymous.stderr

    bob_url = hub_env.hub.git_url(repo_id, token=hub_env.hub.token_for("bob"))
    assert git("clone", "-q", bob_url, str(tmp_path / "b"), check=False).returncode != 0

    alice_url = hub_env.hub.git_url(repo_id, token=hub_env.hub.token_for("alice", "read"))
    git("clone", "-q", alice_url, str(tmp_path / "c"))
    assert (tmp_path / "c" / "s.txt").read_text() == "s"


def test_clone_at_tag_and_partial_clone(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path
) -> None:
    repo_id = make_space(files={"v.txt": "1"})
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="v1", repo_type="space")
    api.upload_file(path_or_fileobj=b"2", path_in_repo="v.txt", repo_id=repo_id, repo_type="space")
    clone = tmp_path / "clone"
    result = git(
        "clone", "--filter=blob:none", "--branch", "v1", hub_env.hub.git_url(repo_id), str(clone)
    )
    assert "filtering not recognized" not in result.stderr
    assert (clone / "v.txt").read_text() == "1"


PYPROJECT = """\
[build-system]
requires = ["setuptools>=70.1"]
build-backend = "setuptools.build_meta"

[project]
name = "localhub-tiny-env"
version = "0.1.0"

[tool.setuptools.packages.find]
where = ["src"]
"""


@pytest.mark.slow
def test_pip_install_from_private_space_at_tag(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path
) -> None:
    files = {"pyproject.toml": PYPROJECT, "src/tiny_env/__init__.py": "VERSION = 1\n"}
    repo_id = make_space(private=True, files=files)
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="v1", repo_type="space")
    api.upload_file(
        path_or_fileobj=b"VERSION = 2\n",
        path_in_repo="src/tiny_env/__init__.py",
        repo_id=repo_id,
        repo_type="space",
    )

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    # No package index: the build backend is this interpreter's setuptools, lent by PYTHONPATH.
    backend = lend_setuptools(tmp_path / "backend")
    env = {
        **os.environ,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "PYTHONPATH": str(backend),
    }

    url = hub_env.hub.git_url(repo_id, token=hub_env.hub.token_for("alice"))
    install = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-index",
            "--no-build-isolation",
            f"git+{url}@v1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    version = subprocess.run(
        [python, "-c", "import tiny_env; print(tiny_env.VERSION)"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert version.stdout.strip() == "1"


def lend_setuptools(folder: Path) -> Path:
    """A folder holding links to this interpreter's setuptools (which builds wheels itself)."""
    folder.mkdir()
    for name in ("setuptools", "pkg_resources", "_distutils_hack"):  # the last two may be gone
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            (folder / name).symlink_to(next(iter(spec.submodule_search_locations)))
    assert (folder / "setuptools").exists()
    return folder


def _pkt(line: str) -> bytes:
    return f"{len(line) + 4:04x}{line}".encode()


def test_gzip_protocol_v2_request(hub_env: HubEnv, make_space: SpaceFactory) -> None:
    import gzip

    import httpx

    repo_id = make_space()
    body = _pkt("command=ls-refs\n") + b"0001" + _pkt("peel\n") + b"0000"
    response = httpx.post(
        f"{hub_env.hub.git_url(repo_id)}/git-upload-pack",
        content=gzip.compress(body),
        headers={
            "content-type": "application/x-git-upload-pack-request",
            "content-encoding": "gzip",
            "git-protocol": "version=2",
        },
    )
    assert response.status_code == 200
    head = hub_env.api("alice").space_info(repo_id).sha
    assert f"{head} refs/heads/main".encode() in response.content
