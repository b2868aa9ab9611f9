"""A LocalHub that builds and runs Docker Spaces on the CI engine, and tiny Spaces to run on it:
an app that answers every request and tells what it was sent (``/seen``), built in seconds from
the offline base image. Its builds may install one package, ``tinypkg``, from its wheelhouse."""

from __future__ import annotations

import os
import time
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.localhub import LocalHub

TINY_DOCKERFILE = """\
ARG BASE_IMAGE=python:3.11-slim
FROM ${BASE_IMAGE}
COPY app.py /srv/app.py
CMD ["python3", "/srv/app.py"]
"""

TINY_APP = '''\
"""Answers everything with 200; GET /seen lists what it was sent before."""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
SEEN = []


class Handler(BaseHTTPRequestHandler):
    def answer(self):
        length = len(self.rfile.read(int(self.headers.get("content-length") or 0)))
        if self.path == "/seen":
            body = json.dumps(SEEN).encode()
        else:
            seen = {"method": self.command, "path": self.path, "headers": dict(self.headers)}
            SEEN.append({**seen, "length": length})
            body = json.dumps({"status": "healthy"}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = answer

    def log_message(self, *args):
        pass


address = (os.environ.get("OPENENV_HOST", "0.0.0.0"), int(os.environ.get("PORT", "8000")))
ThreadingHTTPServer(address, Handler).serve_forever()
'''


def tiny_wheel(folder: Path) -> Path:
    """A wheel of ``tinypkg`` (``import tinypkg; tinypkg.VALUE == 42``), written in ``folder``."""
    name = "tinypkg-1.0"
    files = {
        "tinypkg.py": "VALUE = 42\n",
        f"{name}.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        f"{name}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = "".join(f"{path},,\n" for path in files) + f"{name}.dist-info/RECORD,,\n"
    wheel = folder / f"{name}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in {**files, f"{name}.dist-info/RECORD": record}.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture(scope="module")
def space_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalHub]:
    """A LocalHub of its own, building and running Docker Spaces on the CI engine."""
    from docker_support.engine import BASE_IMAGE, docker, require_docker

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("DOCKER_HOST", require_docker())
    wheelhouse = tmp_path_factory.mktemp("wheelhouse")
    tiny_wheel(wheelhouse)
    hub = LocalHub(
        run_spaces=True,
        space_build_args={"BASE_IMAGE": BASE_IMAGE},
        space_wheelhouse=wheelhouse,
        max_upload_mb=64,
    ).start()
    try:
        assert hub.space_runtime["enabled"], hub.space_runtime
        yield hub
    finally:
        hub.stop()
        monkeypatch.undo()
    mine = f"label=openenv-hub.owner-pid={os.getpid()}"
    spaces = "label=openenv-hub.runtime=localhub-space"
    left = docker("ps", "-aq", "--filter", spaces, "--filter", mine)
    assert left.stdout.strip() == "", "LocalHub left a Space container behind"


def push_space(
    hub: LocalHub,
    repo_id: str,
    files: Mapping[str, str],
    *,
    private: bool = False,
    wait_for: tuple[str, ...] = ("RUNNING",),
    timeout_s: float = 300,
) -> dict[str, Any]:
    """Create a Docker Space as its owner, commit ``files``, and wait for one of ``wait_for``;
    returns the runtime (``stage``, ``errorMessage``...)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(endpoint=hub.endpoint, token=hub.token_for(repo_id.split("/")[0]))
    api.create_repo(repo_id, repo_type="space", space_sdk="docker", private=private)
    operations = [CommitOperationAdd(path, text.encode()) for path, text in files.items()]
    api.create_commit(repo_id, operations, commit_message="the Space", repo_type="space")
    deadline = time.monotonic() + timeout_s
    while True:
        runtime: dict[str, Any] = api.get_space_runtime(repo_id).raw
        if runtime["stage"] in wait_for:
            return runtime
        settled = runtime["stage"] in ("BUILD_ERROR", "RUNTIME_ERROR", "RUNNING", "PAUSED")
        assert not settled and time.monotonic() < deadline, runtime
        time.sleep(0.2)


def tiny_space(**more_files: str) -> dict[str, str]:
    """The files of a tiny Space (a Dockerfile and app.py), with ``more_files`` beside them."""
    return {"Dockerfile": TINY_DOCKERFILE, "app.py": TINY_APP, **more_files}
