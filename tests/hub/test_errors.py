"""Bad input and faults: one clear message and its hint, exit code 1, nothing half-done."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import ECHO_ENV, FaultyHub, space_files, unique_repo

from openenv_hub.errors import PushIncompleteError
from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv
from openenv_hub.transport.local_ports import free_port


def _failed(result: CliResult, *needles: str) -> None:
    assert result.code == 1, result.text
    assert "Traceback" not in result.text
    for needle in needles:
        assert needle in result.err, result.err


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize(
    "repo_id", ["noslash", "a/b/c", "alice/-x", "alice/x..y", "alice/", "al ice/x"]
)
def test_invalid_repo_id(hub_env: HubEnv, cli: Callable[..., CliResult], repo_id: str) -> None:
    _failed(
        cli("push", ECHO_ENV, "--repo-id", repo_id), "is not a valid Space id", "namespace/name"
    )
    _failed(cli("install", repo_id, "--yes"), "is not a valid Space id")


def test_missing_token_says_how_to_log_in(hub_env: HubEnv, cli: Callable[..., CliResult]) -> None:
    hub_env.logout()
    _failed(
        cli("push", ECHO_ENV, "--repo-id", "alice/x"),
        "No Hugging Face token found",
        "hf auth login",
        "HF_TOKEN",
    )
    _failed(cli("fork", "alice/x"), "No Hugging Face token found")


def test_wrong_token_is_refused_and_never_printed(
    hub_env: HubEnv, cli: Callable[..., CliResult]
) -> None:
    result = cli("push", ECHO_ENV, "--repo-id", "alice/x", "--token", "hf_not_a_real_token_123")
    _failed(result, "did not accept the token", "hf auth login")
    assert "hf_not_a_real_token_123" not in result.text


@pytest.mark.parametrize(
    ("user", "role", "repo"), [("alice", "write", "bob/x"), ("alice", "read", "alice/x")]
)
def test_namespace_the_token_cannot_write_to(
    hub_env: HubEnv, cli: Callable[..., CliResult], user: str, role: str, repo: str
) -> None:
    hub_env.login(user, role)  # type: ignore[arg-type]
    repo_id = repo + "-" + hub_env.repo_id("p").split("-")[-1]
    hub_env.hub.clear_requests()
    result = cli("push", ECHO_ENV, "--repo-id", repo_id)
    _failed(
        result, "cannot write to", "Nothing was sent", f"write access to '{repo_id.split('/')[0]}'"
    )
    assert not hub_env.api("alice").repo_exists(repo_id, repo_type="space")
    assert [r for r in hub_env.hub.requests() if r["method"] not in ("GET", "HEAD")] == []


def test_write_access_is_checked_before_anything_is_changed(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    """A read-only token used to get as far as the variables (or the tag) of an existing
    Space, then advise running the same command again."""
    repo_id = unique_repo(hub_env, "readonly")
    push(echo_copy, repo_id, bundle_wheel=False)
    (echo_copy / "NEW.md").write_text("new\n", encoding="utf-8")
    hub_env.login("alice", "read")
    hub_env.hub.clear_requests()
    result = cli("push", echo_copy, "--repo-id", repo_id, "-e", "A=1", "--version", "1.0")
    _failed(result, "read-only token of alice", "Nothing was sent")
    assert "run the same command again" not in result.text
    assert [r for r in hub_env.hub.requests() if r["method"] not in ("GET", "HEAD")] == []
    assert "NEW.md" not in space_files(hub_env, repo_id)


def test_space_that_does_not_exist(
    hub_env: HubEnv, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    for args in (
        ("versions", "alice/no-such-space"),
        ("install", "alice/no-such-space", "--yes"),
        ("pull", "alice/no-such-space", tmp_path / "copy"),
        ("fork", "alice/no-such-space"),
    ):
        _failed(cli(*args), "Space alice/no-such-space was not found", "private")
    assert not (tmp_path / "copy").exists()


def test_version_that_does_not_exist(
    hub_env: HubEnv, cli: Callable[..., CliResult], echo_copy: Path, tmp_path: Path
) -> None:
    repo_id = unique_repo(hub_env, "nover")
    push(echo_copy, repo_id, version="0.1.0", bundle_wheel=False)
    hint = f"openenv versions {repo_id}"
    _failed(
        cli("install", f"{repo_id}@9.9.9", "--yes"),
        "has no version, branch or commit '9.9.9'",
        hint,
    )
    _failed(cli("pull", repo_id, tmp_path / "copy", "--revision", "9.9.9"), "'9.9.9'", hint)
    assert list(tmp_path.glob("*copy*")) == [] and not list(tmp_path.glob(".*pull*"))


def test_existing_version_is_refused_unless_forced(
    hub_env: HubEnv, cli: Callable[..., CliResult], echo_copy: Path
) -> None:
    repo_id = unique_repo(hub_env, "exists")
    assert cli("push", echo_copy, "--repo-id", repo_id, "--version", "0.1.0").code == 0
    api = hub_env.api("alice")
    commits = len(api.list_repo_commits(repo_id, repo_type="space"))
    (echo_copy / "NEW.md").write_text("x\n", encoding="utf-8")
    _failed(
        cli("push", echo_copy, "--repo-id", repo_id, "--version", "0.1.0"),
        "Version 0.1.0",
        "exists already",
        "--force",
    )
    assert len(api.list_repo_commits(repo_id, repo_type="space")) == commits  # nothing uploaded
    forced = cli("push", echo_copy, "--repo-id", repo_id, "--version", "0.1.0", "--force")
    assert forced.code == 0, forced.text
    assert "NEW.md" in space_files(hub_env, repo_id, revision="0.1.0")


def test_bad_version_name(hub_env: HubEnv, cli: Callable[..., CliResult]) -> None:
    _failed(
        cli("push", ECHO_ENV, "--repo-id", "alice/x", "--version", "1.0 beta"),
        "cannot be a version tag",
    )


def test_invalid_environment_is_refused_with_its_checks(
    hub_env: HubEnv, cli: Callable[..., CliResult], echo_copy: Path
) -> None:
    (echo_copy / "Dockerfile").unlink()
    (echo_copy / "openenv.yaml").write_text(
        (echo_copy / "openenv.yaml").read_text().replace("port: 8000", "port: 9000"),
        encoding="utf-8",
    )
    before = _snapshot(echo_copy)
    hub_env.hub.clear_requests()
    result = cli("push", echo_copy, "--repo-id", "alice/invalid-env")
    _failed(
        result,
        "failed 1 of 5 checks",  # the card's app_port is corrected in what is uploaded
        f"dockerfile: no Dockerfile in {echo_copy} (nor in server/)",  # the folder, not a copy
    )
    assert "layout" not in result.err  # one failure for one missing file
    assert hub_env.hub.requests() == []  # nothing was sent
    assert _snapshot(echo_copy) == before


def test_broken_manifest_is_refused(
    hub_env: HubEnv, cli: Callable[..., CliResult], echo_copy: Path
) -> None:
    (echo_copy / "openenv.yaml").write_text("name: [\n", encoding="utf-8")
    _failed(
        cli("push", echo_copy, "--repo-id", "alice/x"), "manifest: openenv.yaml", "invalid YAML"
    )


def test_hub_failing_the_upload_says_what_the_space_holds_and_a_rerun_completes(
    faulty_hub: tuple[FaultyHub, str], cli: Callable[..., CliResult], echo_copy: Path
) -> None:
    hub, _endpoint = faulty_hub
    hub.failing = lambda method, path: method == "POST" and "/commit/" in path
    result = cli("push", echo_copy, "--repo-id", "alice/flaky", "-e", "A=1")
    _failed(
        result,
        "The Space alice/flaky was created, but still holds only the files the Hub puts in a new Space",
        "Run the same command again",
    )
    assert hub.failed and hub.failed[0].startswith("POST /api/spaces/alice/flaky/commit/")

    hub.failing = None
    again = cli("push", echo_copy, "--repo-id", "alice/flaky", "-e", "A=1")
    assert again.code == 0, again.text
    assert "added" in again.out


def test_hub_failing_later_steps_says_the_files_are_there(
    faulty_hub: tuple[FaultyHub, str], echo_copy: Path
) -> None:
    hub, _endpoint = faulty_hub
    hub.failing = lambda method, path: method == "POST" and path.endswith("/variables")
    with pytest.raises(PushIncompleteError) as info:
        push(echo_copy, "alice/later", variables={"A": "1"}, bundle_wheel=False)
    assert info.value.stage == "variables"
    assert "The files of alice/later are uploaded (commit" in str(info.value)
    hub.failing = None
    assert push(echo_copy, "alice/later", variables={"A": "1"}, bundle_wheel=False).plan.files.empty


def test_hub_unreachable(
    hub_env: HubEnv,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")
    _failed(cli("versions", "alice/x"), "Could not reach the Hub at http://127.0.0.1:", "network")
    pulled_to = str(tmp_path / "pulled")
    for args in (
        ("push", ECHO_ENV, "--repo-id", "alice/x"),
        ("fork", "alice/x"),
        ("pull", "alice/x", pulled_to),  # the client raises "no copy on disk" here
    ):
        result = cli(*args)
        _failed(result, "Could not reach the Hub", "network connection")
        assert "token" not in result.err.split("Error:", 1)[1].split("Hint:")[0]  # not its fault


def test_network_error_during_install(
    faulty_hub: tuple[FaultyHub, str], init_env: Path, cli: Callable[..., CliResult]
) -> None:
    hub, endpoint = faulty_hub
    push(init_env, "alice/netfail", bundle_wheel=False)  # (echo_env is installed editable here)
    hub.failing = lambda method, path: "/info/refs" in path or "git-upload-pack" in path
    result = cli("install", "alice/netfail", "--yes")
    _failed(
        result,
        "pip could not install alice/netfail",
        f"git repository at {endpoint} could not be reached",
    )


def test_pull_refuses_a_folder_with_files(
    hub_env: HubEnv, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    (tmp_path / "dest").mkdir()
    (tmp_path / "dest" / "mine.txt").write_text("keep", encoding="utf-8")
    _failed(cli("pull", "alice/anything", tmp_path / "dest"), "is not empty", "nothing was written")
    assert _snapshot(tmp_path / "dest") == {"mine.txt": b"keep"}


@pytest.mark.parametrize("bad", ["NOEQUALS", "=v", "1BAD=v"])
def test_bad_env_var_option(hub_env: HubEnv, cli: Callable[..., CliResult], bad: str) -> None:
    _failed(cli("push", ECHO_ENV, "-e", bad), "--env-var takes KEY=VALUE")


def test_secret_option_from_an_unset_variable(
    hub_env: HubEnv, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    _failed(cli("push", ECHO_ENV, "--secret", "NOT_SET_ANYWHERE"), "$NOT_SET_ANYWHERE is not set")


def test_from_hub_of_a_missing_space_is_one_clear_message_not_the_clients_traceback(
    hub_env: HubEnv,
) -> None:
    code = "from echo_env import EchoEnv\nEchoEnv.from_hub('alice/no-such-space')"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert lines[-1] == (
        "openenv_hub.errors._hub.SpaceNotFoundError: Space alice/no-such-space was not found on "
        f"{hub_env.endpoint} (find the Space)."
    )
    assert "huggingface_hub" not in done.stderr and "direct cause" not in done.stderr
    assert len(lines) < 20
