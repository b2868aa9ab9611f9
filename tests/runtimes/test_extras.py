"""A runtime whose optional extra is missing says exactly what to install."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openenv_hub.docker import docker_client
from openenv_hub.errors import DependencyNotInstalledError
from openenv_hub.runtimes.uv import uv_binary


def test_docker_runtime_without_the_docker_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)
    with pytest.raises(DependencyNotInstalledError) as info:
        docker_client()
    assert 'pip install "openenv-hub[docker]"' in str(info.value)


def test_uv_runtime_without_uv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "uv", None)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DependencyNotInstalledError) as info:
        uv_binary()
    assert 'pip install "openenv-hub[uv]"' in str(info.value)
