"""The catalog's deployment as docs/catalog.md runs it, for the browser tests of
test_catalog_space.py: LocalHub in a process of its own (building and running Docker Spaces),
the echo environment pushed to it, Spaces that run but are no OpenEnv server, fail to build, are
paused or lack the openenv tag, and the catalog itself, served and being published."""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from catalog_support import REPO, card
from doc_blocks import doc_block
from polling import wait_until

from openenv_hub.transport.local_ports import free_port, wait_for_health

DOC = "docs/catalog.md"
BIN = Path(sys.executable).parent
HUB_PORT, CATALOG_PORT = "8765", "7860"  # as the document prints them
BUILD_TIMEOUT_S = 900

ECHO = "alice/echo_env"
HALF = "alice/half_env"  # runs, but is not an OpenEnv server
BROKEN = "alice/broken_env"
PAUSED = "alice/paused_env"
UNTAGGED = "alice/notes"
CATALOG = "alice/catalog"
TAGGED = [ECHO, HALF, PAUSED, BROKEN]  # most liked first

HEALTH_ONLY_SERVER = '''\
"""Answers /health and nothing else: it runs, but it is no OpenEnv server."""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # as PID 1, stop when the Space stops


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.path == "/health"
        body = json.dumps({"status": "healthy"} if ok else {"detail": "Not Found"}).encode()
        self.send_response(200 if ok else 404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Handler).serve_forever()
'''
HEALTH_ONLY_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY server.py /srv/server.py
CMD ["python3", "/srv/server.py"]
"""
BROKEN_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
RUN echo "fetching the weights: mirror unreachable" && exit 7
"""


@dataclass
class Process:
    """A command of the document, running in a session of its own; its output in a file."""

    command: list[str]
    log: Path
    env: dict[str, str]
    cwd: Path = REPO
    popen: subprocess.Popen[bytes] = field(init=False)

    def __post_init__(self) -> None:
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, timeout_s: float) -> int:
        try:
            return self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.command} still runs:\n{self.output[-4000:]}") from None

    def stop(self, timeout_s: float = 90) -> None:
        """SIGTERM to its process group (only this command's), then SIGKILL if it lingers."""
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=30)


@dataclass
class Deployment:
    hub: str
    catalog: str
    env: dict[str, str]
    publish: Process  # `openenv push spaces/catalog ... --wait`, still running at first

    def api(self) -> Any:
        from huggingface_hub import HfApi

        return HfApi(endpoint=self.hub, token="hf_alice_write")

    def openenv(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "openenv"), *args], env={**self.env, "COLUMNS": "250"},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


def _checkout(work: Path) -> Path:
    """The folders the document's commands name, copied: a push remembers its Space in the
    folder it pushed (``.openenv/``), which must not happen to the repository's own."""
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", ".openenv")
    for folder in ("envs/echo_env", "spaces/catalog"):
        shutil.copytree(REPO / folder, work / folder, ignore=skip)
    return work


def _environment(tmp: Path) -> dict[str, str]:
    from docker_support.engine import BASE_IMAGE, require_docker
    from docker_support.wheelhouse import wheelhouse

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DOCKER_HOST=require_docker(),
        PATH=f"{BIN}{os.pathsep}{env['PATH']}",
        HF_HOME=str(tmp / "hf_home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        OPENENV_BASE_IMAGE=BASE_IMAGE,
        OPENENV_BUILD_ARGS="ENABLE_WEB_INTERFACE=false",
        # Space builds have no network: their packages (the catalog's gradio too) come from here
        OPENENV_SPACE_WHEELHOUSE=str(wheelhouse(*_catalog_requirements())),
        CATALOG_POLL_S="1",
        CATALOG_PAGE_SIZE="3",
        # LocalHub's control routes need it; given this way, LocalHub does not print it
        OPENENV_LOCALHUB_ADMIN_TOKEN=secrets.token_urlsafe(24),
    )
    return env


def _catalog_requirements() -> list[str]:
    lines = (REPO / "spaces" / "catalog" / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _admin(env: dict[str, str]) -> dict[str, str]:
    return {"authorization": f"Bearer {env['OPENENV_LOCALHUB_ADMIN_TOKEN']}"}


def _start_localhub(tmp: Path, env: dict[str, str]) -> tuple[Process, str]:
    """The document's first block: LocalHub in the background, then its variables."""
    start, export = doc_block(DOC, "localhub").lines
    assert start.endswith(" &") and export.startswith("export ")
    port = str(free_port())
    hub = Process(shlex.split(start[:-2].replace(HUB_PORT, port)), tmp / "localhub.log", env)
    for pair in shlex.split(export)[1:]:
        key, _, value = pair.partition("=")
        env[key] = value.replace(HUB_PORT, port)
    wait_until(lambda: _answers(f"{env['HF_ENDPOINT']}/_localhub/health"), 60, "LocalHub")
    runtime = httpx.get(f"{env['HF_ENDPOINT']}/_localhub/space-runtime", headers=_admin(env)).json()
    assert runtime["enabled"] and runtime["buildArgs"]["ENABLE_WEB_INTERFACE"] == "false", runtime
    return hub, port


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _plain_spaces(api: Any) -> None:
    """The Spaces besides the environment: built from a tiny Dockerfile, or never built."""
    from huggingface_hub import CommitOperationAdd

    def space(repo_id: str, files: dict[str, str | bytes], sdk: str = "docker") -> None:
        api.create_repo(repo_id, repo_type="space", space_sdk=sdk)
        ops = [
            CommitOperationAdd(p, c if isinstance(c, bytes) else c.encode())
            for p, c in files.items()
        ]
        api.create_commit(repo_id, ops, commit_message="the Space", repo_type="space")

    health_only = {"Dockerfile": HEALTH_ONLY_DOCKERFILE, "server.py": HEALTH_ONLY_SERVER}
    space(HALF, {"README.md": card(["openenv", "games"], title="Half env"), **health_only})
    space(BROKEN, {"README.md": card(["openenv"], short_description="Never builds"),
                   "Dockerfile": BROKEN_DOCKERFILE})  # fmt: skip
    space(PAUSED, {"README.md": card(["openenv"], title="Paused env"), **health_only})
    space(UNTAGGED, {"README.md": card(["games"])}, sdk="static")


def _stage(api: Any, repo_id: str) -> str:
    return str(api.get_space_runtime(repo_id).stage)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    tmp = tmp_path_factory.mktemp("catalog-space")
    env = _environment(tmp)
    work = _checkout(tmp / "checkout")
    hub, port = _start_localhub(tmp, env)
    started = [hub]
    try:
        (push_echo,) = doc_block(DOC, "publish an environment").lines
        echo = Process(shlex.split(push_echo), tmp / "push-echo.log", env, cwd=work)
        started.append(echo)
        api = Deployment(env["HF_ENDPOINT"], "", env, echo).api()
        wait_until(lambda: api.repo_exists(ECHO, repo_type="space"), 120, "the echo Space")
        _plain_spaces(api)
        (push_catalog,) = doc_block(DOC, "publish the catalog").lines
        publish = Process(
            shlex.split(push_catalog.replace(HUB_PORT, port)),
            tmp / "push-catalog.log",
            env,
            cwd=work,
        )
        started.append(publish)
        for repo_id, likes in zip(TAGGED, (3, 2, 1, 0), strict=True):
            likes_url = f"{env['HF_ENDPOINT']}/_localhub/spaces/{repo_id}/likes"
            httpx.post(likes_url, json={"likes": likes}, headers=_admin(env)).raise_for_status()

        assert echo.wait(BUILD_TIMEOUT_S) == 0, echo.output[-4000:]
        wait_until(lambda: _stage(api, PAUSED) == "RUNNING", 300, "the paused Space's first run")
        api.pause_space(PAUSED)
        wait_until(lambda: _stage(api, HALF) == "RUNNING", 300, "the half env")
        wait_until(lambda: _stage(api, BROKEN) == "BUILD_ERROR", 300, "the broken build")

        run_catalog = doc_block(DOC, "run the catalog").code.replace(CATALOG_PORT, str(free_port()))
        catalog_url = "http://127.0.0.1:" + re.findall(r"--port (\d+)", run_catalog)[0]
        catalog = Process(["bash", "-c", run_catalog], tmp / "catalog.log", env, cwd=work)
        started.append(catalog)
        wait_for_health(catalog_url, timeout_s=120, alive=lambda: catalog.popen.poll() is None)
        yield Deployment(env["HF_ENDPOINT"], catalog_url, env, publish)
    finally:
        for process in reversed(started):
            process.stop()
        _check_nothing_left(hub)


def _check_nothing_left(hub: Process) -> None:
    from docker_support.engine import docker

    mine = f"label=openenv-hub.owner-pid={hub.popen.pid}"
    assert docker("ps", "-aq", "--filter", mine).stdout.strip() == "", "a Space container is left"
