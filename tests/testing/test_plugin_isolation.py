"""Installing openenv-hub changes no other project's pytest run: a fresh install into a
virtual environment of its own registers no pytest plugin, so a project's tests there keep their
own ``HF_TOKEN``, ``HF_ENDPOINT`` and ``HF_HOME``; the same project gets LocalHub by asking for
it (``-p openenv_hub.testing``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from openenv_hub.packaging import dev_wheel

OWN = {
    "HF_TOKEN": "hf_the_projects_own_token",
    "HF_ENDPOINT": "https://hub.example.invalid",
}

OWN_TEST = """
import os


def test_the_project_keeps_its_hugging_face_variables():
    assert os.environ["HF_TOKEN"] == "hf_the_projects_own_token"
    assert os.environ["HF_ENDPOINT"] == "https://hub.example.invalid"
    assert os.environ["HF_HOME"] == os.path.join(os.getcwd(), "hf_home")
"""

ASKING_TEST = """
import os


def test_asking_for_the_plugin_gives_localhub(hub_env):
    assert os.environ["HF_ENDPOINT"] == hub_env.endpoint.rstrip("/")
    assert hub_env.api("alice").whoami()["name"] == "alice"
"""


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with this checkout's wheel, its dependencies and pytest."""
    tmp = tmp_path_factory.mktemp("fresh-install")
    wheel = dev_wheel()
    assert wheel is not None, "this test builds the wheel of a source checkout"
    wheels = tmp / "wheels"
    pip = [sys.executable, "-m", "pip"]
    _run(*pip, "download", "-q", "--only-binary=:all:", "-d", wheels, wheel, "pytest", cwd=tmp)
    _run(sys.executable, "-m", "venv", tmp / "venv", cwd=tmp)
    python = tmp / "venv" / "bin" / "python"
    install = ["-m", "pip", "install", "-q", "--no-index", "--find-links", wheels]
    _run(python, *install, wheel, "pytest", cwd=tmp)
    return python


def _project_env(project: Path) -> dict[str, str]:
    """The project's own environment: nothing of this test run's, its own HF_* variables."""
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    return {**env, **OWN, "HF_HOME": str(project / "hf_home")}


@pytest.mark.slow
def test_another_project_keeps_its_own_hugging_face_variables(
    installed: Path, tmp_path: Path
) -> None:
    (tmp_path / "test_own.py").write_text(OWN_TEST)
    out = _run(installed, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path,
               env=_project_env(tmp_path))  # fmt: skip
    assert "1 passed" in out


@pytest.mark.slow
def test_the_same_project_gets_localhub_when_it_asks(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "test_asking.py").write_text(ASKING_TEST)
    command = [installed, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    out = _run(*command, "-p", "openenv_hub.testing", cwd=tmp_path, env=_project_env(tmp_path))
    assert "1 passed" in out
