"""Where LocalHub lives: ``openenv_hub.localhub``, beside the runtimes; the old names
(``openenv_hub.testing.localhub``, ``openenv_hub.testing.LocalHub``, ``python -m
openenv_hub.testing.localhub``) still work and say where it went."""

from __future__ import annotations

import ast
import importlib
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

import openenv_hub.localhub
import openenv_hub.localhub.auth

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGE = REPO_ROOT / "openenv_hub" / "localhub"
OLD = "openenv_hub.testing.localhub"


def test_the_old_package_name_warns_and_gives_the_same_modules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [OLD, f"{OLD}.auth"]:
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.warns(
        DeprecationWarning, match="removed in 0.2: import openenv_hub.localhub instead"
    ):
        old = importlib.import_module(OLD)
    assert old.LocalHub is openenv_hub.localhub.LocalHub
    assert importlib.import_module(f"{OLD}.auth") is openenv_hub.localhub.auth


def test_the_old_testing_names_warn() -> None:
    import openenv_hub.testing as testing

    with pytest.warns(
        DeprecationWarning, match="removed in 0.2: use openenv_hub.localhub.LocalHub instead"
    ):
        assert testing.LocalHub is openenv_hub.localhub.LocalHub
    with pytest.raises(AttributeError):
        _ = testing.Missing


def test_the_old_module_path_still_runs_localhub(tmp_path: Path) -> None:
    command = [sys.executable, "-m", OLD, "--port", "0", "--data", str(tmp_path), "--no-spaces"]
    proc = subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        assert first.startswith("LocalHub serving on http://127.0.0.1:"), first
        assert httpx.get(f"{first.split()[-1]}/_localhub/health").status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=20)
        notice = proc.stderr.read() if proc.stderr else ""
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert code == 0
    assert "removed in 0.2: use python -m openenv_hub.localhub instead." in notice


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_localhub_uses_only_public_modules_of_lower_layers() -> None:
    """Beside the runtimes: never the client, server or UI, never another package's ``_x``."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        for name in _imports(path):
            parts = name.split(".")
            if parts[0] != "openenv_hub" or name.startswith("openenv_hub.localhub"):
                continue
            upper = len(parts) > 1 and parts[1] in ("client", "server", "ui", "testing")
            if upper or any(part.startswith("_") for part in parts):
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {name}")
    assert offenders == []


def test_localhub_has_an_extra_of_its_own() -> None:
    """``pip install "openenv-hub[localhub]"``: what running Docker Spaces needs."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["localhub"] == ["openenv-hub[docker]"]
