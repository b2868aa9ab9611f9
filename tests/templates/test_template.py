"""The environment template: shipped in the wheel, in step with envs/echo_env, and working as generated."""

from __future__ import annotations

import random
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from openenv_hub.checks.static import read_front_matter
from openenv_hub.model.manifest import load_manifest
from openenv_hub.packaging import dev_wheel
from openenv_hub_cli.init import render_env, template_dir

REPO = Path(__file__).resolve().parents[2]


def run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


ECHO = REPO / "envs" / "echo_env"


@pytest.fixture(scope="module")
def echo_rendering(tmp_path_factory: pytest.TempPathFactory) -> Path:
    description = load_manifest(ECHO).description
    return render_env(
        "echo_env", tmp_path_factory.mktemp("echo"), description=description, rng=random.Random(0)
    )


@pytest.mark.parametrize("name", ["Dockerfile", ".dockerignore", "pyproject.toml"])
def test_echo_env_files_are_the_template_rendered(echo_rendering: Path, name: str) -> None:
    assert (ECHO / name).read_text() == (echo_rendering / name).read_text(), (
        f"envs/echo_env/{name} drifted from templates/env; re-render it with openenv init echo_env"
    )


def test_echo_env_card_and_manifest_match_the_template(echo_rendering: Path) -> None:
    card, expected = (
        read_front_matter((p / "README.md").read_text()) for p in (ECHO, echo_rendering)
    )
    random_keys = {"emoji", "colorFrom", "colorTo"}
    assert card.keys() == expected.keys()
    assert {k: v for k, v in card.items() if k not in random_keys} == {
        k: v for k, v in expected.items() if k not in random_keys
    }
    assert (ECHO / "tests").is_dir() and list((ECHO / "tests").glob("test_*.py"))


def test_the_dockerfile_follows_the_space_rules(echo_rendering: Path) -> None:
    text = (echo_rendering / "Dockerfile").read_text()
    assert text.splitlines()[1:3] == ["ARG BASE_IMAGE=python:3.11-slim", "FROM ${BASE_IMAGE}"]
    assert "useradd --create-home --uid 1000" in text and "USER 1000" in text
    assert "python3 -m venv" in text and "--find-links ./.openenv/wheels" in text
    assert (
        "ENABLE_WEB_INTERFACE=${ENABLE_WEB_INTERFACE}" in text
        and "ARG ENABLE_WEB_INTERFACE=true" in text
    )
    assert "urllib.request" in text and "curl" not in text
    # Exec form (the server is PID 1 and gets docker stop's SIGTERM), with the server's own
    # settings; the interface comes from $OPENENV_HOST (all of them, unless a runtime says
    # otherwise), the port from $PORT.
    assert re.search(
        r'^CMD \["python", "-m", "openenv_hub\.server", "echo_env\.server\.app:app"\]$', text, re.M
    )
    assert "    OPENENV_HOST=0.0.0.0 \\\n" in text


def test_the_wheel_ships_the_template() -> None:
    wheel = dev_wheel()
    assert wheel is not None
    names = set(zipfile.ZipFile(wheel).namelist())
    source = {
        "openenv_hub/_templates/env/" + p.relative_to(template_dir()).as_posix()
        for p in template_dir().rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert source <= names
    assert "openenv_hub/_templates/env/{{cookiecutter.name}}/.dockerignore" in names
    assert not [n for n in names if "__pycache__" in n]


@pytest.mark.slow
def test_generated_env_tests_pass_in_a_fresh_venv(fresh_venv: Path, tmp_path: Path) -> None:
    """openenv init my_env --no-input && cd my_env && pip install -e ".[dev]" && pytest."""
    bin_dir = fresh_venv / "bin"
    run([str(bin_dir / "openenv"), "init", "my_env", "--no-input"], cwd=tmp_path)
    env_dir = tmp_path / "my_env"
    run([str(bin_dir / "python"), "-m", "pip", "install", "-q", "-e", ".[dev]"], cwd=env_dir)
    output = run([str(bin_dir / "pytest"), "-q", "-p", "no:cacheprovider"], cwd=env_dir)
    assert "5 passed" in output
    check = "from my_env import MyEnv, MyAction; from importlib.metadata import entry_points; " \
        "print(entry_points(group='openenv.environments')['my_env'].load().__name__)"  # fmt: skip
    assert run([str(bin_dir / "python"), "-c", check], cwd=fresh_venv).strip() == "MyEnv"
    assert (bin_dir / "my-env-server").is_file()
