"""Fixtures of the Hub tests: the CLI in-process, environments to publish, a LocalHub that
fails on purpose, and a fresh virtual environment for installs (slow tests only).

Every test here checks, when it ends, that LocalHub only ever saw requests for 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_runner import CliResult

from openenv_hub.testing.pytest_plugin import HubEnv

REPO = Path(__file__).resolve().parents[2]
ECHO_ENV = REPO / "envs" / "echo_env"
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "false", "PIP_NO_INPUT": "1"}


_REMOTE_CONNECTS: list[object] = []


def _record_remote_connects(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: remember any socket this process connects to a host other than loopback."""
    if event == "socket.connect" and isinstance(args[1], tuple):
        host = str(args[1][0])
        if host not in ("127.0.0.1", "::1", "localhost"):
            _REMOTE_CONNECTS.append(args[1])


sys.addaudithook(_record_remote_connects)


@pytest.fixture(autouse=True)
def _only_local_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test: this process connected to 127.0.0.1 only, and every request LocalHub
    served was addressed to 127.0.0.1."""
    _REMOTE_CONNECTS.clear()
    yield
    assert _REMOTE_CONNECTS == [], f"connections to other hosts: {_REMOTE_CONNECTS}"
    if "local_hub" not in request.fixturenames:
        return
    hub = request.getfixturevalue("local_hub")
    hosts = {entry["host"].rsplit(":", 1)[0] for entry in hub.requests()}
    assert hosts <= {"127.0.0.1"}, hosts


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def git_visible_files(root: Path) -> set[str]:
    """What git would commit in ``root`` (tracked or not, minus what .gitignore files ignore)."""
    out = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", ".", cwd=root)
    top = Path(git("rev-parse", "--show-toplevel", cwd=root).strip())
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    files = {name for name in out.split("\0") if name}
    return {
        name.removeprefix(prefix + "/") if prefix != "." else name
        for name in files
        if (root / (name.removeprefix(prefix + "/") if prefix != "." else name)).is_file()
    }


def space_files(hub_env: HubEnv, repo_id: str, revision: str | None = None) -> dict[str, bytes]:
    """Every file of a Space at ``revision`` with its content, read from LocalHub's git repo.

    The names are checked against what the Hub API (real client) lists.
    """
    import io
    import tarfile

    bare = hub_env.hub.data_dir / "repos" / "spaces" / f"{repo_id}.git"
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision or "main"],
        cwd=bare,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        files = {
            member.name: tar.extractfile(member).read()  # type: ignore[union-attr]
            for member in tar.getmembers()
            if member.isfile()
        }
    listed = hub_env.api("alice").list_repo_files(repo_id, repo_type="space", revision=revision)
    assert set(listed) == set(files)
    return files


@pytest.fixture
def echo_copy(tmp_path: Path) -> Path:
    """A writable copy of envs/echo_env, in its own git work tree (caches left behind, and its
    quality scorecard, whose section on the card tests/hub/test_push_quality.py checks)."""
    target = tmp_path / "echo_env"
    shutil.copytree(
        ECHO_ENV,
        target,
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", "quality.json"),
    )
    git("init", "-q", cwd=target)
    return target


@pytest.fixture
def init_env(tmp_path: Path, cli: Callable[..., CliResult]) -> Path:
    """A fresh ``openenv init`` environment, in its own git work tree, with files to ignore."""
    name = f"game_{uuid.uuid4().hex[:6]}_env"
    result = cli("init", name, "--no-input", "--output-dir", tmp_path / "gen")
    assert result.code == 0, result.text
    root = tmp_path / "gen" / name
    (root / ".gitignore").write_text("scratch/\n*.log\n!keep.log\n", encoding="utf-8")
    (root / "scratch").mkdir()
    (root / "scratch" / "notes.txt").write_text("private notes\n", encoding="utf-8")
    (root / "debug.log").write_text("noise\n", encoding="utf-8")
    (root / "keep.log").write_text("kept\n", encoding="utf-8")
    (root / ".env").write_text("API_KEY=do-not-upload\n", encoding="utf-8")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "python").write_text("", encoding="utf-8")
    git("init", "-q", cwd=root)
    return root


def unique_repo(hub_env: HubEnv, prefix: str, namespace: str = "alice") -> str:
    return hub_env.repo_id(prefix, namespace)


@dataclass
class Venv:
    """A virtual environment with openenv-hub installed from the checkout's wheel."""

    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for commands in this venv: its bin first, pip kept off the index, and
        no PYTHONPATH of the test run (a checkout on it would shadow what the venv has)."""
        return {
            **os.environ,
            **OFFLINE_PIP,
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "VIRTUAL_ENV": str(self.root),
            "PYTHONPATH": "",
            **extra,
        }

    def run(self, *args: str | Path, cwd: Path | None = None, **extra: str) -> str:
        done = subprocess.run(
            [str(a) for a in args],
            cwd=cwd,
            env=self.env(**extra),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{args} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout + done.stderr


@pytest.fixture(scope="session")
def hub_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """``python -m venv`` + openenv-hub from the checkout's wheel (it is not on PyPI).

    Its third-party dependencies come from the package index once, here; the tests then run
    pip with ``PIP_NO_INDEX=1`` so what they install comes from LocalHub (127.0.0.1) only.
    """
    from openenv_hub.packaging import dev_wheel

    wheel = dev_wheel()
    assert wheel is not None, "the test suite runs openenv-hub from its source tree"
    venv = Venv(tmp_path_factory.mktemp("hubvenv") / "venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv.root)], check=True)
    pip = [str(venv.python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, str(wheel), "setuptools>=70.1", "wheel"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return venv


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    """The third-party wheels openenv-hub needs (and setuptools, to build a Space's package),
    downloaded by ``pip download`` once per machine and kept in the openenv-hub cache, so a
    fresh virtual environment installs from LocalHub and this folder with no index."""
    import hashlib
    import zipfile

    from docker_support.wheelhouse import downloaded

    from openenv_hub.packaging import _cache_dir, dev_wheel

    wheel = dev_wheel()
    assert wheel is not None, "the test suite runs openenv-hub from its source tree"
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        metadata = archive.read(name).decode()
    requires = sorted(
        line.split(": ", 1)[1]
        for line in metadata.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    )
    requires += ["setuptools>=70.1", "wheel"]
    key = hashlib.sha256(f"{sys.version_info[:2]}{requires}".encode()).hexdigest()[:16]
    return downloaded(_cache_dir().parent / "wheelhouse" / key, requires)


def run_python(
    python: Path,
    code: str,
    *,
    env: dict[str, str] | None = None,
    timeout_s: float = 120,
    cwd: Path | None = None,
) -> str:
    """Run ``python -c code`` in ``cwd`` (default: the interpreter's folder, where no checkout
    can shadow what is installed)."""
    done = subprocess.run(
        [str(python), "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout_s,
        cwd=cwd or python.parent,
        check=False,
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def all_output(*parts: Any) -> str:
    return "\n".join(str(part) for part in parts)


class FaultyHub:
    """A LocalHub on its own port that answers 503 to requests matching ``failing``.

    ``failing`` is a predicate on ``(method, path)``; ``None`` serves everything. Point the code
    under test at ``endpoint`` (``HF_ENDPOINT`` is read at call time).
    """

    def __init__(self, data_dir: Path) -> None:
        from openenv_hub.localhub import DEMO_TOKENS, create_app

        self.inner = create_app(data_dir, DEMO_TOKENS)
        self.failing: Callable[[str, str], bool] | None = None
        self.failed: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if (
            scope["type"] == "http"
            and self.failing
            and self.failing(scope["method"], scope["path"])
        ):
            self.failed.append(f"{scope['method']} {scope['path']}")
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": b'{"error": "Hub unavailable"}'})
            return
        await self.inner(scope, receive, send)

    def hosts(self) -> set[str]:
        return {entry["host"].rsplit(":", 1)[0] for entry in self.inner.context.log.entries()}


@pytest.fixture
def faulty_hub(
    tmp_path: Path, serve: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FaultyHub, str]]:
    """A failing-on-demand LocalHub, made the endpoint of this test; yields (hub, endpoint)."""
    hub = FaultyHub(tmp_path / "faulty-hub")
    server = serve(hub, ws="none")
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_TOKEN", "hf_alice_write")
    yield hub, server.url
    assert hub.hosts() <= {"127.0.0.1"}


@contextmanager
def serve_app(python: Path, app: str, **env: str) -> Iterator[str]:
    """``python -m uvicorn app`` on a free port (as a Space runs it); yields its URL."""
    from openenv_hub.runtimes.local import LocalProcessProvider
    from openenv_hub.transport.local_ports import free_port, wait_for_health

    port = free_port()
    log = tempfile.TemporaryFile()  # noqa: SIM115 - closed by stop()
    process = subprocess.Popen(
        [str(python), "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", str(port)],
        cwd=python.parent,
        env={**os.environ, **env},
        stdout=log,
        stderr=log,
    )
    server = LocalProcessProvider(process, f"http://127.0.0.1:{port}", log)
    try:
        wait_for_health(server.base_url, timeout_s=60, alive=server.running)
    except Exception:
        output = server.output()
        server.stop()
        raise AssertionError(f"{app} did not start:\n{output[-3000:]}") from None
    try:
        yield server.base_url
    finally:
        server.stop()
