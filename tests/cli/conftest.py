"""Fixtures of the CLI tests: run ``openenv`` in-process, and make environments to run it on."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from openenv_hub.cli.init import render_env
from openenv_hub.cli.main import main


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., CliResult]:
    """``cli("validate", path)`` runs ``openenv validate path`` through the error boundary."""
    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: object) -> CliResult:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exit_info:
            main([str(arg) for arg in args])
        captured = capsys.readouterr()
        return CliResult(int(exit_info.value.code or 0), captured.out, captured.err)

    return run


@pytest.fixture(scope="session")
def rendered_env(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh ``openenv init my_env`` (read-only: copy it with ``new_env`` to change it)."""
    return render_env("my_env", tmp_path_factory.mktemp("rendered"), rng=random.Random(0))


@pytest.fixture
def new_env(rendered_env: Path, tmp_path: Path) -> Callable[[], Path]:
    """A writable copy of a fresh environment."""

    def make() -> Path:
        target = tmp_path / "envs" / "my_env"
        shutil.copytree(rendered_env, target)
        return target

    return make
