"""Fixtures: the coding environment served on 127.0.0.1 (in this process, or in its Docker image),
with a secret file and a secret environment variable of the server that sandboxes must not see.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from coding_env.server.app import build_app
from coding_env.server.rewards import fraction_passed
from coding_env.server.settings import SandboxSettings
from coding_support import (
    DOCKER_SECURITY,
    ENV_DIR,
    IMAGE,
    LIMITS,
    REPO,
    SECRET_VARIABLE,
    Target,
    serve,
)


@pytest.fixture(scope="session")
def local_target() -> Iterator[Target]:
    secret = secrets.token_hex(16)
    outside = Path(tempfile.mkdtemp(prefix="coding-env-outside-"))
    secret_path = outside / "secret.txt"
    secret_path.write_text(secret)
    secret_path.chmod(0o644)  # readable by anyone who can see it: only the sandbox may stop it
    os.environ[SECRET_VARIABLE] = secret
    app = build_app(SandboxSettings(**LIMITS), web=False)  # type: ignore[arg-type]
    try:
        with serve(app) as base_url:
            yield Target(
                base_url, secret, str(secret_path), os.getpid(), str(outside), os.path.exists
            )
    finally:
        os.environ.pop(SECRET_VARIABLE, None)
        shutil.rmtree(outside, ignore_errors=True)


@pytest.fixture(scope="session")
def fraction_target() -> Iterator[Target]:
    """A server whose reward is the fraction of tests passed: the grading attacks show that
    no test passes that should not, which an all-or-nothing reward would hide."""
    app = build_app(SandboxSettings(**LIMITS), reward_fn=fraction_passed, web=False)  # type: ignore[arg-type]
    with serve(app) as base_url:
        yield Target(base_url, "", "", os.getpid(), "", os.path.exists)


def _docker_support() -> object:
    """The repository's Docker test helpers (tests/docker_support), shared with its own tests."""
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    from docker_support import engine

    return engine


@pytest.fixture(scope="session")
def engine() -> Any:
    """tests/docker_support/engine.py, with DOCKER_HOST pointing at a running engine."""
    support: Any = _docker_support()
    os.environ["DOCKER_HOST"] = support.require_docker()
    return support


@pytest.fixture(scope="session")
def docker_validation() -> dict[str, Any]:
    """``openenv validate --level docker`` of the Space: builds the image once for every
    Docker test, runs it with the one setting bubblewrap needs, checks it; the JSON report."""
    engine: Any = _docker_support()
    os.environ["DOCKER_HOST"] = engine.require_docker()
    import contextlib
    import io
    import json

    from coding_support import readme_docker_line

    from openenv_hub_cli.main import main

    out = io.StringIO()
    # The README's line, on this folder, with a JSON report, the offline base image, and no UI
    # in the image (the UI is tested elsewhere).
    printed = readme_docker_line()
    assert printed[:2] == ["openenv", "validate"] and DOCKER_SECURITY[1] in printed
    args = ["validate", str(ENV_DIR), *printed[2:], "--json", "--base-image", engine.BASE_IMAGE]
    args += ["--build-arg", "ENABLE_WEB_INTERFACE=false"]
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main(args)
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def docker_image(docker_validation: dict[str, Any]) -> str:
    built = [c for c in docker_validation["checks"] if c["name"] == "docker_build"]
    assert built and built[0]["ok"], docker_validation
    return IMAGE


@pytest.fixture(scope="session")
def docker_target(docker_image: str) -> Iterator[Target]:
    engine: Any = _docker_support()
    secret = secrets.token_hex(16)
    port = engine.free_port()
    env = {f"CODING_ENV_{k.upper()}": str(v) for k, v in LIMITS.items()}
    env.update({SECRET_VARIABLE: secret, "PORT": str(port)})
    container = engine.run_container(
        docker_image, env=env, extra_args=[*DOCKER_SECURITY, "--label", "openenv-test=coding-env"]
    )
    try:
        base_url = f"http://127.0.0.1:{port}"
        engine.wait_http(f"{base_url}/health", timeout_s=90, container=container)
        home = "/home/user"
        engine.docker("exec", container.id, "sh", "-c", f"printf %s {secret} > {home}/secret.txt")

        def exists(path: str) -> bool:
            done = engine.docker("exec", container.id, "test", "-e", path, check=False)
            return bool(done.returncode == 0)

        # The server is the container's first process (CMD execs uvicorn).
        yield Target(base_url, secret, f"{home}/secret.txt", 1, home, exists)
    finally:
        container.remove()


@pytest.fixture(
    scope="session",
    params=["local", pytest.param("docker", marks=[pytest.mark.slow, pytest.mark.docker])],
)
def target(request: pytest.FixtureRequest) -> Target:
    """Each escape test runs against the server in this process, then inside the Space image."""
    name = "local_target" if request.param == "local" else "docker_target"
    return request.getfixturevalue(name)  # type: ignore[no-any-return]
