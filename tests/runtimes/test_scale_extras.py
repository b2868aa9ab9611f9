"""The Ray and Kubernetes runtimes without their extras say exactly what to install."""

from __future__ import annotations

import sys

import pytest

from openenv_hub.errors import DependencyNotInstalledError


def test_ray_runtime_without_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    from openenv_hub.runtimes.ray import RayProvider

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(DependencyNotInstalledError) as info:
        RayProvider.start("echo_env.server.app:app", address="127.0.0.2:6379")
    assert 'pip install "openenv-hub[ray]"' in str(info.value)


def test_kubernetes_apply_without_the_client(monkeypatch: pytest.MonkeyPatch) -> None:
    from openenv_hub.runtimes.kubernetes import api_client

    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(DependencyNotInstalledError) as info:
        api_client()
    assert 'pip install "openenv-hub[kubernetes]"' in str(info.value)
