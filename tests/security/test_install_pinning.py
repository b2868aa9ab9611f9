"""Threats: ``openenv install`` runs code nobody consented to, or leaks a private Space's token.

Each test installs a tiny package from a Space on LocalHub with real git and real pip into a
``--target`` folder, so the test interpreter is untouched.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import uuid
from pathlib import Path

import pytest

from openenv_hub.hub import install
from openenv_hub.testing.pytest_plugin import HubEnv, SpaceFactory

PIP_ARGS = ["--no-deps", "--no-index", "--no-build-isolation", "--quiet"]


def tiny_package(name: str, value: int) -> dict[str, str]:
    return {
        "pyproject.toml": (
            '[build-system]\nrequires = ["setuptools>=70.1"]\n'
            'build-backend = "setuptools.build_meta"\n'
            f'[project]\nname = "{name.replace("_", "-")}"\nversion = "0.1.0"\n'
            f'[tool.setuptools]\npackages = ["{name}"]\n'
        ),
        f"{name}/__init__.py": f"VALUE = {value}\n",
    }


def _installed_commit(target: Path) -> str:
    (dist,) = target.glob("*.dist-info")
    return str(json.loads((dist / "direct_url.json").read_text())["vcs_info"]["commit_id"])


def test_install_runs_the_commit_it_asked_consent_for_even_if_the_tag_moves(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tag moved between the consent question and pip (by the Space's owner or an attacker
    with write access) must not bring in code the user never agreed to run."""
    name = f"pinned_{uuid.uuid4().hex[:8]}"
    repo_id = make_space(files=tiny_package(name, 42))
    api = hub_env.api("alice")
    api.create_tag(repo_id, tag="1.0.0", repo_type="space")
    reviewed = api.space_info(repo_id, revision="1.0.0").sha
    asked: list[str] = []

    def consent_then_move_the_tag(question: str) -> bool:
        asked.append(question)
        api.upload_file(
            path_or_fileobj=b"VALUE = 666  # not what the user agreed to\n",
            path_in_repo=f"{name}/__init__.py",
            repo_id=repo_id,
            repo_type="space",
        )
        api.delete_tag(repo_id, tag="1.0.0", repo_type="space")
        api.create_tag(repo_id, tag="1.0.0", repo_type="space")
        return True

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # as at a terminal
    target = tmp_path / "site"
    result = install(
        repo_id,
        "1.0.0",
        confirm=consent_then_move_the_tag,
        pip_args=[*PIP_ARGS, "--target", str(target)],
    )
    assert reviewed in asked[0]  # the question names the commit
    assert (target / name / "__init__.py").read_text() == "VALUE = 42\n"
    assert result.commit == reviewed == _installed_commit(target)
    assert result.command[-1].endswith(f"@{reviewed}")
    assert api.space_info(repo_id, revision="1.0.0").sha != reviewed  # the tag did move


@pytest.fixture
def git_argv_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``git`` first on PATH that records every command line pip gives git, then runs git."""
    real_git = next(
        Path(folder) / "git"
        for folder in os.environ["PATH"].split(os.pathsep)
        if (Path(folder) / "git").is_file()
    )
    log = tmp_path / "git-argv.log"
    shim = tmp_path / "shim" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real_git}" "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    return log


def test_a_private_space_token_never_appears_on_a_command_line(
    hub_env: HubEnv, make_space: SpaceFactory, tmp_path: Path, git_argv_log: Path
) -> None:
    """Any local user can read every process's command line (``ps``); the token used to travel
    in the URL given to pip and git (``git+http://user:TOKEN@...``)."""
    name = f"private_{uuid.uuid4().hex[:8]}"
    repo_id = make_space(private=True, files=tiny_package(name, 7))
    token = hub_env.hub.token_for("alice")
    lines: list[str] = []
    target = tmp_path / "site"
    result = install(
        repo_id,
        yes=True,
        pip_args=[*PIP_ARGS[:-1], "-v", "--target", str(target)],
        on_output=lines.append,
    )
    assert (target / name / "__init__.py").read_text() == "VALUE = 7\n"  # git was let in
    git_lines = git_argv_log.read_text().splitlines()
    assert any("clone" in line and repo_id in line for line in git_lines)
    assert not [line for line in git_lines if token in line]
    assert token not in " ".join(result.command)
    assert token not in "\n".join(lines)
