"""``python -m openenv_hub.localhub``: the build arguments of Space images, from
``--space-base-image`` and ``--space-build-arg`` or from ``$OPENENV_BASE_IMAGE`` and
``$OPENENV_BUILD_ARGS``, as ``openenv build`` reads them."""

from __future__ import annotations

import pytest

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
