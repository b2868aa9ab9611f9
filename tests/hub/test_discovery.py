"""Installed environments by entry point (group ``openenv.environments``)."""

from __future__ import annotations

import sys

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


def test_another_interpreter_is_scanned_in_a_subprocess() -> None:
    assert list_environments(python=sys.executable) == list_environments()


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
