"""The game and market environments pass `openenv validate`: at runtime (served here) and at the
docker level (each Space image built with the real engine, run on the host network, checked)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openenv_hub_cli.main import main

REPO = Path(__file__).resolve().parents[2]
ENVS = ["atari_env", "chess_env", "finance_env"]
NO_UI = "ENABLE_WEB_INTERFACE=false"  # the UI is tested in the browser tests
# Leave out what the checks do not use, to keep the builds quick: Stockfish (the chess tests
# play it on the host) and pyarrow (the trading tests read Parquet on the host).
LEAN = {"chess_env": ["WITH_STOCKFISH=false"], "finance_env": ["EXTRAS="]}


def openenv(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(arg) for arg in args])
    return int(exit_info.value.code or 0), json.loads(capsys.readouterr().out)


def failures(report: dict) -> str:
    """The failed checks of ``report``, a hint and a message each, to read when a test fails."""
    failed = [c for c in report["checks"] if not c["ok"]]
    return "\n".join(f"{c['name']}: {c['hint']}\n{c['message']}" for c in failed)


@pytest.mark.parametrize("env", ENVS)
def test_runtime_validation_passes(env: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = openenv(capsys, "validate", REPO / "envs" / env, "--level", "runtime", "--json")
    assert code == 0, failures(report)


@pytest.fixture
def docker_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from docker_support.engine import require_docker

    monkeypatch.setenv("DOCKER_HOST", require_docker())
    yield os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311")


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.timeout(900)
@pytest.mark.parametrize("env", ENVS)
def test_the_space_image_passes_docker_validation(
    env: str, docker_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    lean = [arg for value in LEAN.get(env, []) for arg in ("--build-arg", value)]
    code, report = openenv(
        capsys, "validate", REPO / "envs" / env, "--level", "docker", "--json",
        "--base-image", docker_env, "--build-arg", NO_UI, *lean,
    )  # fmt: skip
    assert code == 0, failures(report)
    assert {"docker_build", "docker_run", "websocket"} <= {c["name"] for c in report["checks"]}
    print(f"{env}: built and validated in {time.monotonic() - started:.0f} s")
