"""The root command: --version, --help everywhere, and the error boundary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openenv_hub import __version__


def test_version(cli: Callable[..., Any]) -> None:
    result = cli("--version")
    assert (result.code, result.out.strip()) == (0, f"openenv-hub {__version__}")


@pytest.mark.parametrize("command", [[], ["init"], ["serve"], ["validate"], ["build"]])
def test_help(cli: Callable[..., Any], command: list[str]) -> None:
    result = cli(*command, "--help")
    assert result.code == 0
    assert "Usage" in result.out


def test_unknown_command_is_a_usage_error(cli: Callable[..., Any]) -> None:
    result = cli("frobnicate")
    assert result.code == 2
    assert "No such command" in result.err


def test_tracebacks_only_with_the_debug_variable(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "openenv.yaml").write_text("name: my_env\nprot: 1\n")
    quiet = cli("serve", tmp_path)
    assert quiet.code == 1
    assert "Did you mean 'port'" in quiet.err and "Traceback" not in quiet.err
    assert "OPENENV_DEBUG=1" in quiet.err
    monkeypatch.setenv("OPENENV_DEBUG", "1")
    loud = cli("serve", tmp_path)
    assert loud.code == 1 and "Traceback" in loud.err
