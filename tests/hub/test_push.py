"""``openenv push`` against LocalHub with the real huggingface_hub client."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import ECHO_ENV, git_visible_files, space_files, unique_repo

from openenv_hub.hub import push, versions
from openenv_hub.testing.pytest_plugin import HubEnv

WHEEL_PREFIX = ".openenv/wheels/openenv_hub-"


def _wheels(files: set[str] | dict[str, bytes]) -> set[str]:
    return {name for name in files if name.startswith(WHEEL_PREFIX)}


def test_push_echo_env_uploads_the_files_git_would_commit(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "echo")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    remote = space_files(hub_env, repo_id)
    expected = git_visible_files(echo_copy)
    assert set(remote) - _wheels(remote) - {".gitattributes"} == expected
    assert len(_wheels(remote)) == 1  # a development install bundles its wheel
    for name in expected - {"pyproject.toml"}:  # pyproject.toml names the wheel: test_wheel_pin
        assert remote[name] == (echo_copy / name).read_bytes(), name
    assert f"Install: pip install git+{hub_env.endpoint}/spaces/{repo_id}" in result.out
    assert f"App:     {hub_env.endpoint}/_localhub/apps/{repo_id}" in result.out
    info = hub_env.api("alice").space_info(repo_id)
    assert info.sdk == "docker" and not info.private


def test_push_a_fresh_init_env_honours_gitignore_and_never_uploads_secrets(
    hub_env: HubEnv, init_env: Path
) -> None:
    repo_id = unique_repo(hub_env, "init")
    result = push(init_env, repo_id)
    remote = space_files(hub_env, repo_id)
    never = {".env", ".venv/bin/python"}  # git would commit them: no .gitignore names them
    assert set(remote) - _wheels(remote) - {".gitattributes"} == git_visible_files(init_env) - never
    assert {"keep.log", ".gitignore"} <= set(remote)
    assert not {".env", "debug.log", "scratch/notes.txt", ".venv/bin/python"} & set(remote)
    assert {".env", "debug.log", "scratch/", ".venv/"} <= set(result.plan.ignored)
    assert result.plan.card_changes == []


def test_second_push_deletes_what_was_deleted_locally_in_one_commit(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    repo_id = unique_repo(hub_env, "sync")
    push(echo_copy, repo_id, bundle_wheel=False)
    (echo_copy / "tests" / "test_echo_env.py").unlink()
    (echo_copy / "NOTES.md").write_text("new\n", encoding="utf-8")
    (echo_copy / "Dockerfile").write_text(
        (echo_copy / "Dockerfile").read_text() + "# changed\n", encoding="utf-8"
    )
    api = hub_env.api("alice")
    before = len(api.list_repo_commits(repo_id, repo_type="space"))
    result = push(echo_copy, repo_id, bundle_wheel=False)
    assert result.plan.files.deleted == ["tests/test_echo_env.py"]
    assert result.plan.files.added == ["NOTES.md"]
    assert result.plan.files.changed == ["Dockerfile"]
    assert len(api.list_repo_commits(repo_id, repo_type="space")) == before + 1
    remote = space_files(hub_env, repo_id)
    assert "tests/test_echo_env.py" not in remote
    assert remote["NOTES.md"] == b"new\n"
    assert remote["Dockerfile"].endswith(b"# changed\n")
    assert result.commit == api.space_info(repo_id).sha


def test_push_without_changes_makes_no_commit(hub_env: HubEnv, echo_copy: Path) -> None:
    repo_id = unique_repo(hub_env, "same")
    first = push(echo_copy, repo_id, bundle_wheel=False)
    again = push(echo_copy, repo_id, bundle_wheel=False)
    assert again.plan.files.empty and again.commit == first.commit


def test_variables_and_secrets_are_set_and_secret_values_never_shown(
    hub_env: HubEnv,
    echo_copy: Path,
    cli: Callable[..., CliResult],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifest = echo_copy / "openenv.yaml"
    manifest.write_text(
        manifest.read_text()
        + "variables:\n  LEVEL: easy\n  ROUNDS: 3\nsecrets: [FROM_ENV, MISSING]\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("FROM_ENV", "env-secret-value-42")
    monkeypatch.setenv("VIA_NAME", "named-secret-value-7")
    caplog.set_level(logging.DEBUG)
    repo_id = unique_repo(hub_env, "vars")
    result = cli(
        "push", echo_copy, "--repo-id", repo_id, "-e", "LEVEL=hard", "-e", "EXTRA=a=b",
        "--secret", "API_KEY=cli-secret-value-99", "--secret", "VIA_NAME",
    )  # fmt: skip
    assert result.code == 0, result.text
    api = hub_env.api("alice")
    variables = {k: v.value for k, v in api.get_space_variables(repo_id).items()}
    assert variables == {"LEVEL": "hard", "ROUNDS": "3", "EXTRA": "a=b"}
    assert set(api.get_space_secrets(repo_id)) == {"API_KEY", "VIA_NAME"}  # named ones only
    for declared in ("FROM_ENV", "MISSING"):
        assert f"Secret {declared} not uploaded" in result.err
        assert f"--secret {declared}" in result.err
    seen = result.text + caplog.text + "".join(str(e) for e in hub_env.hub.requests())
    for value in ("cli-secret-value-99", "env-secret-value-42", "named-secret-value-7"):
        assert value not in seen
    assert "Secrets uploaded: API_KEY, VIA_NAME (names only; values are never shown)" in result.out


def test_version_tag_is_created_and_listed(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "ver")
    first = push(echo_copy, repo_id, version="0.1.0", bundle_wheel=False)
    (echo_copy / "CHANGES.md").write_text("0.2.0\n", encoding="utf-8")
    second = push(echo_copy, repo_id, version="0.2.0", bundle_wheel=False)
    listed = versions(repo_id)
    assert [(v.name, v.commit) for v in listed] == [
        ("0.1.0", first.commit),
        ("0.2.0", second.commit),
    ]
    assert second.pip_install == f"pip install git+{hub_env.endpoint}/spaces/{repo_id}@0.2.0"
    result = cli("versions", repo_id)
    assert result.code == 0 and "0.1.0" in result.out and f"{repo_id}@0.2.0" in result.out
    assert "CHANGES.md" not in space_files(hub_env, repo_id, revision="0.1.0")


def test_dry_run_changes_nothing(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "dry")
    result = cli(
        "push",
        echo_copy,
        "--repo-id",
        repo_id,
        "--dry-run",
        "--version",
        "1.0.0",
        "-e",
        "A=1",
        "--secret",
        "S=hidden-dry",
    )
    assert result.code == 0, result.text
    assert "Dry run: nothing was changed." in result.out
    assert "Space " + repo_id + " (new, public)" in result.out
    assert "openenv.yaml" in result.out and "hidden-dry" not in result.text
    assert not hub_env.api("alice").repo_exists(repo_id, repo_type="space")

    push(echo_copy, repo_id, bundle_wheel=False)
    (echo_copy / "tests" / "test_echo_env.py").unlink()
    hub_env.hub.clear_requests()
    plan = push(echo_copy, repo_id, dry_run=True, bundle_wheel=False).plan
    assert plan.files.deleted == ["tests/test_echo_env.py"] and not plan.create
    writes = [r for r in hub_env.hub.requests() if r["method"] not in ("GET", "HEAD")]
    assert writes == []
    assert "tests/test_echo_env.py" in space_files(hub_env, repo_id)


def test_private_space_cannot_be_read_without_a_token(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    from huggingface_hub.errors import RepositoryNotFoundError

    repo_id = unique_repo(hub_env, "priv")
    result = cli("push", echo_copy, "--repo-id", repo_id, "--private")
    assert result.code == 0, result.text
    assert hub_env.api("alice").space_info(repo_id).private
    from huggingface_hub import HfApi

    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub_env.endpoint, token=False).space_info(repo_id)
    with pytest.raises(RepositoryNotFoundError):
        hub_env.api("bob").list_repo_files(repo_id, repo_type="space")
    hub_env.logout()
    denied = cli("versions", repo_id)
    assert denied.code == 1 and "not found" in denied.err and "private" in denied.err


def test_push_adds_a_missing_space_card_and_says_so(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    readme = echo_copy / "README.md"
    readme.write_text("# Echo\n\nNo card here.\n", encoding="utf-8")
    repo_id = unique_repo(hub_env, "card")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert "Space card: front matter: added (the README had none)" in result.out
    remote = space_files(hub_env, repo_id)["README.md"].decode()
    assert (
        remote.startswith("---\n")
        and "sdk: docker" in remote
        and remote.endswith("# Echo\n\nNo card here.\n")
    )
    assert readme.read_text(encoding="utf-8") == "# Echo\n\nNo card here.\n"
    card = hub_env.api("alice").space_info(repo_id).card_data
    assert card is not None and card["app_port"] == 8000


def test_default_repo_id_is_user_and_manifest_name(hub_env: HubEnv, tmp_path: Path) -> None:
    name = f"echo_{tmp_path.name[-8:].replace('-', '_')}_env"
    env = tmp_path / name
    shutil.copytree(
        ECHO_ENV, env, ignore=shutil.ignore_patterns("*.egg-info", ".pytest_cache", "__pycache__")
    )
    manifest = env / "openenv.yaml"
    manifest.write_text(
        manifest.read_text().replace("name: echo_env", f"name: {name}"), encoding="utf-8"
    )
    (env / "echo_env").rename(env / name)
    for path in env.rglob("*.py"):
        path.write_text(path.read_text().replace("echo_env", name), encoding="utf-8")
    pyproject = env / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("echo_env", name), encoding="utf-8")
    manifest.write_text(manifest.read_text().replace("echo_env.", f"{name}."), encoding="utf-8")
    hub_env.login("bob")
    result = push(env, bundle_wheel=False)
    assert result.repo_id == f"bob/{name}"
    assert hub_env.api("bob").space_info(f"bob/{name}").sha == result.commit


def test_an_existing_space_is_made_private_and_gets_the_hardware_asked_for(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    repo_id = unique_repo(hub_env, "settings")
    push(echo_copy, repo_id, bundle_wheel=False)
    api = hub_env.api("alice")
    assert not api.space_info(repo_id).private
    result = push(echo_copy, repo_id, private=True, hardware="cpu-upgrade", bundle_wheel=False)
    assert result.plan.private and result.plan.files.empty
    assert api.space_info(repo_id).private
    assert api.get_space_runtime(repo_id).requested_hardware == "cpu-upgrade"


def test_public_makes_a_private_space_public_and_no_flag_keeps_it_as_it_is(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    repo_id = unique_repo(hub_env, "visibility")
    assert cli("push", echo_copy, "-r", repo_id, "--private").code == 0
    api = hub_env.api("alice")
    assert cli("push", echo_copy).code == 0  # to the same Space, remembered
    assert api.space_info(repo_id).private
    result = cli("push", echo_copy, "--public")
    assert result.code == 0, result.text
    assert f"Space {repo_id} (public)" in result.out
    assert not api.space_info(repo_id).private


def test_push_wait_shows_each_stage_and_the_seconds_it_took(
    hub_env: HubEnv,
    echo_copy: Path,
    cli: Callable[..., CliResult],
    caplog: pytest.LogCaptureFixture,
) -> None:
    repo_id = unique_repo(hub_env, "wait")
    push(echo_copy, repo_id, bundle_wheel=False)
    hub_env.hub.set_space_runtime(
        repo_id, stage="BUILDING", then=["BUILDING", "APP_STARTING", "RUNNING"]
    )
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    result = cli("push", echo_copy, "--wait")
    assert result.code == 0, result.text
    lines = [line for line in result.err.splitlines() if line.startswith(f"Space {repo_id}: ")]
    assert [line.split(": ")[1].split(" (")[0] for line in lines] == [
        "asking for its stage",
        "BUILDING",
        "APP_STARTING",
        "RUNNING",
    ]
    assert lines[-1].endswith(" s)") and f"Running {repo_id}" in result.out
    stages = [r.stage for r in caplog.records if r.name == "openenv_hub.support.progress"]  # type: ignore[attr-defined]
    assert stages == ["asking for its stage", "BUILDING", "APP_STARTING", "RUNNING"]
