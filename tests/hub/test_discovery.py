"""Installed environments by entry point (group ``openenv.environments``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openenv_hub.discovery import get_environment, list_environments
from openenv_hub.errors import EnvironmentNotFoundError


def test_the_echo_env_is_found_by_its_entry_point() -> None:
    env = get_environment("echo_env")
    assert env.value == "echo_env.client:EchoEnv"
    assert env.distribution == "openenv-echo-env" and env.package == "echo_env"
    from echo_env import EchoEnv

    assert env.load() is EchoEnv
    assert env in list_environments()
    assert get_environment("echo-env") == env


def test_another_interpreter_is_scanned_in_a_subprocess(tmp_path: Path) -> None:
    """A launcher script for this interpreter (as pyenv's shims are) is another path, so the scan
    runs in it; the script leaves a mark to show it ran."""
    mark = tmp_path / "ran"
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\ntouch "{mark}"\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    assert list_environments(python=python) == list_environments()
    assert mark.is_file()


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [("echo", "echo_env"), ("echo_en", "echo_env"), ("ecko_env", "echo_env")],
)
def test_unknown_names_get_suggestions(name: str, suggestion: str) -> None:
    with pytest.raises(EnvironmentNotFoundError) as info:
        get_environment(name)
    assert info.value.suggestions == [suggestion]
    assert f"Did you mean '{suggestion}'?" in str(info.value)
    assert "openenv install" in info.value.hint


def test_nothing_close_gets_no_suggestion() -> None:
    with pytest.raises(EnvironmentNotFoundError) as info:
        get_environment("mujoco")
    assert info.value.suggestions == [] and "Did you mean" not in str(info.value)
