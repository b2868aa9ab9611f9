"""Threat: ``openenv push`` hands the pusher's own secrets to a Space whose code someone else
wrote: a manifest's ``secrets:`` names them, and push used to send their values.

Every test pushes with the real ``openenv`` command and the real huggingface_hub client to
LocalHub, then reads the secrets LocalHub keeps for the Space (what its app would get).
"""

from __future__ import annotations

import json
import logging
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runner import CliResult
from hub_support import unique_repo

from openenv_hub.hub import push
from openenv_hub.testing.pytest_plugin import HubEnv

AWS_VALUE = "aws-secret-value-5c1e-never-shown"
QUESTION = "needs the secret"


def _declaring(env: Path, *names: str) -> Path:
    """``env`` with ``secrets: [names]`` in its manifest (as the manifest's author wrote it)."""
    manifest = env / "openenv.yaml"
    text = manifest.read_text(encoding="utf-8") + f"secrets: [{', '.join(names)}]\n"
    manifest.write_text(text, encoding="utf-8")
    return env


def _stored_secrets(hub_env: HubEnv, repo_id: str) -> dict[str, str]:
    """The secrets LocalHub keeps for the Space, with their values (what its app would get)."""
    folder = hub_env.hub.data_dir / "repos" / "spaces" / f"{repo_id}.git"
    meta = json.loads((folder / "localhub.json").read_text(encoding="utf-8"))
    return {name: entry["value"] for name, entry in meta["secrets"].items()}


def _missing_notes(err: str) -> dict[str, str]:
    """``Secret NAME not uploaded: ...`` lines of push's report, as ``{name: line}``."""
    notes = [line for line in err.splitlines() if line.startswith("Secret ")]
    return {line.split()[1]: line for line in notes}


def test_secrets_a_manifest_names_are_not_uploaded_unless_the_pusher_names_them(
    hub_env: HubEnv,
    echo_copy: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``secrets: [AWS_SECRET_ACCESS_KEY, HF_TOKEN]`` in an openenv.yaml made push store both
    values, the pusher's own write token included, as secrets of a Space whose code the
    manifest's author wrote."""
    _declaring(echo_copy, "AWS_SECRET_ACCESS_KEY", "HF_TOKEN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_VALUE)
    token = os.environ["HF_TOKEN"]
    repo_id = unique_repo(hub_env, "declared")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert _stored_secrets(hub_env, repo_id) == {}
    notes = _missing_notes(result.err)
    assert set(notes) == {"AWS_SECRET_ACCESS_KEY", "HF_TOKEN"}
    assert "--secret AWS_SECRET_ACCESS_KEY uploads it" in notes["AWS_SECRET_ACCESS_KEY"]
    assert "a Hugging Face token" in notes["HF_TOKEN"] and "--secret HF_TOKEN" in notes["HF_TOKEN"]
    assert f"{repo_id}/settings" in notes["HF_TOKEN"]
    assert "Secrets uploaded" not in result.out
    assert AWS_VALUE not in result.text and token not in result.text

    library = push(echo_copy, unique_repo(hub_env, "declared-api"), bundle_wheel=False)
    assert library.plan.secrets == [] and _stored_secrets(hub_env, library.repo_id) == {}
    missing = [item.name for item in library.plan.missing_secrets]
    assert missing == ["AWS_SECRET_ACCESS_KEY", "HF_TOKEN"]


def test_secret_option_uploads_what_it_names_and_is_the_only_way_the_token_goes(
    hub_env: HubEnv,
    echo_copy: Path,
    cli: Callable[..., CliResult],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pusher decides: ``--secret AWS_SECRET_ACCESS_KEY`` sends that one (named in the
    report, its value nowhere), and the token goes only when ``--secret HF_TOKEN`` names it."""
    caplog.set_level(logging.DEBUG)
    _declaring(echo_copy, "AWS_SECRET_ACCESS_KEY", "HF_TOKEN")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", AWS_VALUE)
    token = os.environ["HF_TOKEN"]
    repo_id = unique_repo(hub_env, "named")
    first = cli("push", echo_copy, "--repo-id", repo_id, "--secret", "AWS_SECRET_ACCESS_KEY")
    assert first.code == 0, first.text
    assert _stored_secrets(hub_env, repo_id) == {"AWS_SECRET_ACCESS_KEY": AWS_VALUE}
    assert "Secrets uploaded: AWS_SECRET_ACCESS_KEY (names only" in first.out
    assert set(_missing_notes(first.err)) == {"HF_TOKEN"}

    second = cli("push", echo_copy, "--repo-id", repo_id, "--secret", "HF_TOKEN")
    assert second.code == 0, second.text
    stored = _stored_secrets(hub_env, repo_id)
    assert stored == {"AWS_SECRET_ACCESS_KEY": AWS_VALUE, "HF_TOKEN": token}
    assert "Secrets uploaded: HF_TOKEN (names only" in second.out
    assert "HF_TOKEN holds the Hugging Face token this push uses" in second.err
    assert _missing_notes(second.err) == {}
    seen = first.text + second.text + caplog.text + str(hub_env.hub.requests())
    assert AWS_VALUE not in seen and token not in seen


def _push_at_a_terminal(args: list[str], env: dict[str, str], timeout_s: float = 300) -> str:
    """``openenv push ARGS`` with a terminal (a pty) as stdin, stdout and stderr, answering
    ``y`` to every question; returns what the terminal showed."""
    leader, follower = pty.openpty()
    command = [sys.executable, "-m", "openenv_hub_cli.main", "push", *args]
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    shown, answered, deadline = b"", 0, time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if shown.count(b"[y/N]") > answered:
                answered += 1
                os.write(leader, b"y\n")
            if not ready and process.poll() is not None:
                break
        assert process.wait(timeout=max(1.0, deadline - time.monotonic())) == 0, shown[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(leader)
    return shown.decode(errors="replace")


def test_at_a_terminal_push_asks_about_declared_secrets_but_never_about_a_hub_token(
    hub_env: HubEnv, echo_copy: Path
) -> None:
    """A question at a terminal is the one other way a declared secret goes: never for a Hub
    token, whatever the variable's name, and never without a terminal (a piped ``y``)."""
    _declaring(echo_copy, "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "HUB_COPY", "NOT_SET_HERE")
    token = os.environ["HF_TOKEN"]
    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": AWS_VALUE, "HUB_COPY": token, "COLUMNS": "250"}
    env.pop("NOT_SET_HERE", None)
    piped_repo = unique_repo(hub_env, "piped")
    command = [sys.executable, "-m", "openenv_hub_cli.main", "push", str(echo_copy)]
    piped = subprocess.run(
        [*command, "--repo-id", piped_repo],
        input="y\ny\ny\ny\n", capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert piped.returncode == 0, piped.stdout[-3000:] + piped.stderr[-3000:]
    assert QUESTION not in piped.stdout + piped.stderr
    assert _stored_secrets(hub_env, piped_repo) == {}

    repo_id = unique_repo(hub_env, "asked")
    shown = _push_at_a_terminal([str(echo_copy), "--repo-id", repo_id], env)
    questions = [line for line in shown.splitlines() if QUESTION in line]
    assert len(questions) == 1 and "$AWS_SECRET_ACCESS_KEY" in questions[0], shown[-3000:]
    assert _stored_secrets(hub_env, repo_id) == {"AWS_SECRET_ACCESS_KEY": AWS_VALUE}
    assert "Secrets uploaded: AWS_SECRET_ACCESS_KEY (names only" in shown
    assert AWS_VALUE not in shown and token not in shown


def test_a_value_shaped_like_a_hub_token_is_held_back_as_one(
    hub_env: HubEnv, echo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another account's token under any name (``TEAM_KEY=hf_...``) is a Hub token too: the
    report says so, as it does for ``HF_TOKEN``, so nobody is asked to send it."""
    _declaring(echo_copy, "TEAM_KEY")
    monkeypatch.setenv("TEAM_KEY", "hf_" + "a1B2" * 9)
    plan = push(echo_copy, unique_repo(hub_env, "shaped"), dry_run=True, bundle_wheel=False).plan
    assert plan.secrets == []
    (missing,) = plan.missing_secrets
    assert missing.name == "TEAM_KEY" and "a Hugging Face token" in missing.reason
    assert "hf_a1B2" not in missing.reason
