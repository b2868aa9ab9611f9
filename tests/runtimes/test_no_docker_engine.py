"""No Docker engine where the client looks: a clear error, and no socket left open (``openenv ps
--ray`` on a Ray cluster without Docker goes through here)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from openenv_hub.docker import engine
from openenv_hub.errors import DockerError


def test_no_engine_at_the_default_socket(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    pytest.importorskip("docker")
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    socket = tmp_path / "docker.sock"
    monkeypatch.setattr(engine, "DEFAULT_SOCKET", str(socket))
    with pytest.raises(
        DockerError, match=f"No Docker engine answers at the default socket {socket}"
    ):
        engine.docker_client()
    gc.collect()  # a socket left open would be reported here, as an error
