"""Fixtures of the CLI tests: run ``openenv`` in-process, and make environments to run it on."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from openenv_hub_cli.init import render_env


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
