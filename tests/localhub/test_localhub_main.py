"""``python -m openenv_hub.localhub``: the build arguments of Space images, from
``--space-base-image`` and ``--space-build-arg`` or from ``$OPENENV_BASE_IMAGE`` and
``$OPENENV_BUILD_ARGS``, as ``openenv build`` reads them; and ``--jobs``."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from child_processes import end_child, start_child

from openenv_hub.localhub.__main__ import build_args, parse_args


def test_build_args_from_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "IGNORED=1")
    args = parse_args(
        ["--space-base-image", "base:1", "--space-build-arg", "A=1", "--space-build-arg", "B=x=y"]
    )
    assert build_args(args) == {"A": "1", "B": "x=y", "BASE_IMAGE": "base:1"}


def test_build_args_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENENV_BASE_IMAGE", "base:2")
    monkeypatch.setenv("OPENENV_BUILD_ARGS", "ENABLE_WEB_INTERFACE=false  C=3")
    assert build_args(parse_args([])) == {
        "ENABLE_WEB_INTERFACE": "false", "C": "3", "BASE_IMAGE": "base:2",
    }  # fmt: skip


def test_a_build_arg_without_a_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENENV_BUILD_ARGS", raising=False)
    with pytest.raises(SystemExit, match="--space-build-arg 'NOVALUE': use KEY=VALUE"):
        build_args(parse_args(["--space-build-arg", "NOVALUE"]))


@pytest.mark.parametrize("flag", [True, False])
def test_jobs_run_when_asked_for_on_the_command_line(tmp_path: Path, flag: bool) -> None:
    """``--jobs`` turns LocalHub's Jobs API on (the banner says so); without it Jobs are
    refused with how to turn them on."""
    command = [sys.executable, "-m", "openenv_hub.localhub", "--port", "0", "--demo-tokens"]
    command += ["--no-spaces", "--data", str(tmp_path), *(["--jobs"] if flag else [])]
    process = start_child(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        endpoint = process.stdout.readline().split()[-1]
        banner = [process.stdout.readline() for _ in range(4)]
        said = (
            "Jobs: run in Docker\n" if flag else "Jobs: not run (start with --jobs to run them)\n"
        )
        assert said in banner
        answer = httpx.get(
            f"{endpoint}/api/jobs/alice", headers={"authorization": "Bearer hf_alice_write"}
        )
        if flag:
            assert answer.status_code == 200 and answer.json() == []
        else:
            assert answer.status_code == 503 and "start it with --jobs" in answer.text
    finally:
        end_child(process, signal.SIGTERM)
