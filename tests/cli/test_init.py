"""``openenv init``: names, targets, what it generates, and nothing left behind on failure."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openenv_hub_cli import init as init_module


def test_generates_a_complete_space_repo(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli(
        "init", "my_game_env", "--output-dir", tmp_path, "--no-input", "--description", 'Says "hi"'
    )
    assert result.code == 0, result.err
    root = tmp_path / "my_game_env"
    expected = {
        ".dockerignore", "Dockerfile", "README.md", "openenv.yaml", "pyproject.toml",
        "my_game_env/__init__.py", "my_game_env/client.py", "my_game_env/models.py",
        "my_game_env/server/__init__.py", "my_game_env/server/app.py",
        "my_game_env/server/environment.py", "tests/test_my_game_env.py",
    }  # fmt: skip
    assert {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()} == expected
    assert (
        "class MyGameEnv(EnvClient[MyGameAction, MyGameObservation, State])"
        in (root / "my_game_env" / "client.py").read_text()
    )
    assert (
        'my-game-env-server = "my_game_env.server.app:main"'
        in (root / "pyproject.toml").read_text()
    )
    assert list(tmp_path.iterdir()) == [root]  # no temporary folder left


@pytest.mark.parametrize(
    ("name", "suggestion"),
    [
        ("my-env", "my_env"),
        ("1env", "env_1env"),
        ("MyEnv", "my_env"),
        ("class", "class_env"),
        ("", "my_env"),
    ],
)
def test_rejects_bad_names(
    cli: Callable[..., Any], tmp_path: Path, name: str, suggestion: str
) -> None:
    result = cli("init", name, "-o", tmp_path, "--no-input")
    assert result.code == 1
    assert f"openenv init {suggestion}" in result.err
    assert "Traceback" not in result.err
    assert list(tmp_path.iterdir()) == []


def test_refuses_a_non_empty_target(cli: Callable[..., Any], tmp_path: Path) -> None:
    (tmp_path / "my_env").mkdir()
    (tmp_path / "my_env" / "notes.txt").write_text("mine")
    result = cli("init", "my_env", "-o", tmp_path, "--no-input")
    assert result.code == 1
    assert "already exists and is not empty" in result.err
    assert [p.name for p in (tmp_path / "my_env").iterdir()] == ["notes.txt"]


def test_accepts_an_empty_target(cli: Callable[..., Any], tmp_path: Path) -> None:
    (tmp_path / "my_env").mkdir()
    assert cli("init", "my_env", "-o", tmp_path, "--no-input").code == 0
    assert (tmp_path / "my_env" / "openenv.yaml").is_file()


def test_leaves_nothing_behind_when_rendering_fails(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "template"
    shutil.copytree(init_module.template_dir(), broken)
    (broken / "{{cookiecutter.name}}" / "Dockerfile").write_text("{{ cookiecutter.nope.nope }}\n")
    monkeypatch.setattr(init_module, "template_dir", lambda: broken)
    out = tmp_path / "out"
    result = cli("init", "my_env", "-o", out, "--no-input")
    assert result.code == 1
    assert list(out.iterdir()) == []


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The system's temporary folder and cookiecutter's replay folder, moved under ``tmp_path``."""
    from cookiecutter import config

    system_tmp, replay = tmp_path / "system-tmp", tmp_path / "replay"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    monkeypatch.setitem(config.DEFAULT_CONFIG, "replay_dir", str(replay))
    return [system_tmp, replay]


def test_writes_nothing_outside_the_new_folder(
    cli: Callable[..., Any], tmp_path: Path, elsewhere: list[Path]
) -> None:
    out = tmp_path / "out"
    assert cli("init", "my_env", "-o", out, "--no-input").code == 0
    assert [p.name for p in out.iterdir()] == ["my_env"]
    assert [sorted(p.rglob("*")) if p.exists() else [] for p in elsewhere] == [[], []]


def test_pre_generation_hook_rejects_bad_names(tmp_path: Path, elsewhere: list[Path]) -> None:
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    out = tmp_path / "out"
    with pytest.raises(FailedHookException):
        cookiecutter(
            str(init_module.template_dir()), no_input=True, output_dir=str(out),
            extra_context={"name": "my-env"}, default_config=True,
        )  # fmt: skip
    assert not out.exists() or list(out.iterdir()) == []
    for leftover in elsewhere[0].iterdir():  # cookiecutter leaves the rendered hook behind
        leftover.unlink()
