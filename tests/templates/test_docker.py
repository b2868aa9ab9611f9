"""Images of the echo env and of a fresh ``openenv init`` env: built, run on the host network, validated."""

from __future__ import annotations

import json
import logging
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_runner import CliResult

from openenv_hub.docker import run_container
from openenv_hub_cli.init import render_env
from openenv_hub_cli.main import main

REPO = Path(__file__).resolve().parents[2]
NO_UI = "ENABLE_WEB_INTERFACE=false"  # gradio is tested elsewhere; keep builds quick


@pytest.fixture
def docker_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    from docker_support.engine import require_docker

    monkeypatch.setenv("DOCKER_HOST", require_docker())
    yield os.environ.get("OPENENV_TEST_BASE_IMAGE", "openenv-test-base:py311")


def openenv(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str]:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        main([str(arg) for arg in args])
    return int(exit_info.value.code or 0), capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.parametrize("env", ["echo", "generated"])
def test_build_run_and_validate_the_image(
    docker_env: str,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    env: str,
) -> None:
    if env == "echo":
        path, tag = REPO / "envs" / "echo_env", "openenv-test/echo-env:latest"
    else:
        path, tag = (
            render_env("my_env", tmp_path, rng=random.Random(1)),
            "openenv-test/my-env:latest",
        )
    before = sorted(p.name for p in path.iterdir())
    code, _ = openenv(
        capsys, "build", path, "--base-image", docker_env, "--build-arg", NO_UI, "--tag", tag
    )
    assert code == 0
    assert sorted(p.name for p in path.iterdir()) == before  # wheels went to a staged copy only
    caplog.set_level(logging.INFO, logger="openenv_hub.support.progress")
    with run_container(tag) as base_url:
        waits = [(r.task, r.stage) for r in caplog.records]  # type: ignore[attr-defined]
        assert (f"container of {tag}", "waiting for /health") in waits
        code, out = openenv(capsys, "validate", base_url, "--json")
    report = json.loads(out)
    assert code == 0, [c for c in report["checks"] if not c["ok"]]


@pytest.mark.slow
@pytest.mark.docker
def test_validate_level_docker(docker_env: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = openenv(
        capsys, "validate", REPO / "envs" / "echo_env", "--level", "docker", "--json",
        "--base-image", docker_env, "--build-arg", NO_UI,
    )  # fmt: skip
    report = json.loads(out)
    assert code == 0, [c for c in report["checks"] if not c["ok"]]
    assert {"docker_build", "docker_run", "websocket"} <= {c["name"] for c in report["checks"]}


def test_build_without_an_engine_says_how_to_point_at_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    with pytest.raises(SystemExit) as exit_info:
        main(["build", str(REPO / "envs" / "echo_env")])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1
    assert "DOCKER_HOST" in err or "not installed" in err
    assert "Traceback" not in err


@pytest.mark.docker
def test_an_offline_build_names_the_base_image_option(
    docker_env: str, cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    """A base image the engine cannot pull (offline, or no such image) fails at FROM, and the
    hint says how to build from an image the engine has."""
    path = render_env("offline_env", tmp_path, rng=random.Random(0))
    missing = "openenv-hub-test/no-such-base:missing"
    result = cli("build", path, "--base-image", missing, "--tag", "openenv-hub-test/never:built")
    assert result.code == 1
    assert f"could not pull the base image {missing}" in result.err
    assert "--base-image IMAGE, or set OPENENV_BASE_IMAGE" in result.err


@pytest.mark.slow
@pytest.mark.docker
def test_the_space_image_serves_with_the_fast_websocket_protocol(
    docker_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The image's server is started as `openenv serve` starts it, not by plain uvicorn."""
    import subprocess

    tag = "openenv-test/echo-env:latest"  # built (and cached) like the image test above
    code, _ = openenv(
        capsys, "build", REPO / "envs" / "echo_env", "--base-image", docker_env,
        "--build-arg", NO_UI, "--tag", tag,
    )  # fmt: skip
    assert code == 0
    with run_container(tag):
        (container,) = subprocess.run(
            ["docker", "ps", "-q", "--filter", f"ancestor={tag}"],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        logs = subprocess.run(
            ["docker", "logs", container], capture_output=True, text=True, check=True
        )
    said = logs.stdout + logs.stderr
    assert (
        "WebSocket implementation openenv_hub.transport.uvicorn_websocket.WebSocketProtocol" in said
    ), said


@pytest.mark.slow
@pytest.mark.docker
def test_a_container_that_exits_fails_at_once_with_the_hint_first(
    docker_env: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import time

    from openenv_hub.errors import DockerError
    from openenv_hub.validation.docker import build_image, default_tag

    env = render_env("my_env", tmp_path, rng=random.Random(2))
    app = env / "my_env" / "server" / "app.py"
    app.write_text(  # only in a container: the levels before docker pass
        app.read_text() + "\nimport os\nif os.environ.get('VIRTUAL_ENV') == '/opt/venv':\n"
        "    raise RuntimeError('the database is missing')\n"
    )
    tag = default_tag("my_env")
    build_image(env, tag, base_image=docker_env, build_args=[NO_UI], quiet=True)
    started = time.monotonic()
    with pytest.raises(DockerError) as info, run_container(tag):
        pass
    assert time.monotonic() - started < 20  # not the 60 s /health wait
    assert "exited (code 1) before /health answered" in str(info.value)
    assert "RuntimeError: the database is missing" in info.value.hint
    code, out = openenv(
        capsys, "validate", env, "--level", "docker", "--base-image", docker_env,
        "--build-arg", NO_UI,
    )  # fmt: skip
    assert code == 1, out
    row = out[out.index("docker_run") :]
    assert row.index("hint:") < row.index("The container of")
    assert "docker_run, continued:" in out  # the log, below the table, at full width
    assert "\n  RuntimeError: the database is missing\nFailed: docker_run" in out


@pytest.mark.docker
def test_a_failed_build_step_is_reported_with_its_output_and_no_secret(
    docker_env: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`validate --level docker` names the step that failed and shows the end of its output
    (the build's own error, not only its exit code); a secret build argument and a URL's
    password that the step printed are hidden, and the step's container is not left behind."""
    import subprocess
    import uuid

    env = render_env("my_env", tmp_path, rng=random.Random(3))
    marker = f"sprockets-{uuid.uuid4().hex[:8]}"  # this run's step, told from other builds'
    failing = (
        "ARG DEPLOY_TOKEN\n"
        'RUN echo "fetching https://alice:pip-pw@pypi.example/simple with $DEPLOY_TOKEN" '
        f'&& echo "the widget factory is out of {marker}" && exit 3\n'
    )
    dockerfile = env / "Dockerfile"
    text = dockerfile.read_text()
    dockerfile.write_text(text.replace("FROM ${BASE_IMAGE}\n", "FROM ${BASE_IMAGE}\n" + failing))
    secret = "tok-s3cret-91"
    args = [
        "--base-image",
        docker_env,
        "--build-arg",
        NO_UI,
        "--build-arg",
        f"DEPLOY_TOKEN={secret}",
    ]
    code, out = openenv(capsys, "validate", env, "--level", "docker", "--json", *args)
    assert code == 1, out
    (build,) = [c for c in json.loads(out)["checks"] if c["name"] == "docker_build"]
    first, *lines = build["message"].splitlines()
    assert first.startswith(f"docker build of {env} failed (exit 3) at step 4/"), first
    assert first.endswith(f'out of {marker}" && exit 3. Its output there ends with:'), first
    run = failing.splitlines()[1].removeprefix("RUN ").replace("alice:pip-pw@", "***@")
    assert lines == [
        "fetching https://***@pypi.example/simple with ***",
        f"the widget factory is out of {marker}",
        f"The command '/bin/sh -c {run}' returned a non-zero code: 3",
    ]
    assert build["hint"].startswith(
        f"The last line of its output says why: the widget factory is out of {marker}."
    )
    code, out = openenv(capsys, "validate", env, "--level", "docker", *args)  # the table
    assert code == 1 and marker in out, out  # in the table (its column folds long lines)
    assert secret not in out and "pip-pw" not in out, out
    left = subprocess.run(
        ["docker", "ps", "-a", "--no-trunc", "--format", "{{.Command}}"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert marker not in left, left  # the failed step's container was removed
