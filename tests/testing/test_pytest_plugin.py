"""The pytest plugin: what loading it sets up, and what it refuses (a frozen endpoint)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_plugin_outside_pytest_leaves_no_temporary_folder() -> None:
    code = "from openenv_hub.testing import pytest_plugin; print(pytest_plugin._settings.root)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    root = Path(out.stdout.strip())
    assert root.name.startswith("localhub-pytest-")
    assert not root.exists()


def test_importing_testing_does_not_load_heavy_modules() -> None:
    code = (
        "import sys, openenv_hub.testing, openenv_hub.testing.pytest_plugin;"
        "heavy = [m for m in ('huggingface_hub', 'fastapi', 'uvicorn') if m in sys.modules];"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
    code = "import sys, openenv_hub.localhub; print('huggingface_hub' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


PLUGIN_TEST = """
import huggingface_hub
from huggingface_hub import constants


def test_endpoint_was_set_before_import(hub_env):
    assert constants.ENDPOINT == hub_env.endpoint
    assert constants.ENDPOINT.startswith("http://127.0.0.1:")
    api = huggingface_hub.HfApi()
    repo = hub_env.repo_id("plugin")
    api.create_repo(repo, repo_type="space", space_sdk="docker")
    assert huggingface_hub.whoami()["name"] == "alice"
    assert hub_env.hub.requests()
"""


def _run_python(
    tmp_path: Path, files: dict[str, str], *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run Python in ``tmp_path`` with ``files`` written there and no ``HF_*`` variables."""
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    # Only the plugins named here: an environment where an older openenv-hub was installed may
    # still register this one as an entry point (tests/testing/test_plugin_isolation.py checks
    # that a fresh install does not).
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


PLUGIN = "openenv_hub.testing.pytest_plugin"


@pytest.mark.parametrize("name", ["openenv_hub.testing", PLUGIN])
def test_plugin_in_a_fresh_session(tmp_path: Path, name: str) -> None:
    files = {"test_inner.py": PLUGIN_TEST}
    result = _run_python(tmp_path, files, "-m", "pytest", "-q", "-p", name, "test_inner.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_plugin_named_in_the_root_conftest(tmp_path: Path) -> None:
    files = {
        "conftest.py": 'pytest_plugins = ["openenv_hub.testing"]\n',
        "test_inner.py": PLUGIN_TEST,
    }
    result = _run_python(tmp_path, files, "-m", "pytest", "-q", "test_inner.py")
    assert result.returncode == 0, result.stdout + result.stderr


def test_importing_the_testing_package_changes_no_variable(tmp_path: Path) -> None:
    code = "import os, openenv_hub.testing; print(os.environ.get('HF_TOKEN'))"
    result = _run_python(tmp_path, {}, "-c", code, extra_env={"HF_TOKEN": "hf_own"})
    assert result.stdout.strip() == "hf_own", result.stderr


def test_plugin_refuses_a_late_endpoint(tmp_path: Path) -> None:
    code = (
        "import huggingface_hub.constants, pytest, sys;"
        f"sys.exit(pytest.main(['-q', '-p', '{PLUGIN}', 'test_inner.py']))"
    )
    result = _run_python(tmp_path, {"test_inner.py": PLUGIN_TEST}, "-c", code)
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "imported before" in result.stderr


def test_plugin_loaded_mid_collection_fails_its_tests(tmp_path: Path) -> None:
    files = {
        "a/test_early.py": "import huggingface_hub.constants\n\ndef test_a():\n    pass\n",
        "b/conftest.py": (
            f"from {PLUGIN.rsplit('.', 1)[0]} import pytest_plugin\n\n"
            "def pytest_configure(config):\n"
            "    config.pluginmanager.register(pytest_plugin, pytest_plugin.PLUGIN_NAME)\n"
        ),
        "b/test_inner.py": PLUGIN_TEST,
    }
    result = _run_python(tmp_path, files, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert result.returncode == pytest.ExitCode.TESTS_FAILED
    assert "1 passed, 1 error" in result.stdout
    assert "imported before" in result.stdout
