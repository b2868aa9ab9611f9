"""The ``uv`` runtime: an environment served from a virtual environment of its own, made with
``uv``.

The caller's interpreter is never changed: ``uv venv`` makes an environment in the cache
(``$OPENENV_HUB_CACHE`` or ``~/.cache/openenv-hub``, folder ``uv-envs``), ``uv pip install``
puts the environment's package in it (with the wheels a Space bundles in ``.openenv/wheels``,
and this openenv-hub's own wheel when it runs from a source checkout), and the server is that
environment's ``python -m uvicorn APP``.

A Space is downloaded at a commit and its environment is kept under that commit: the second
start of the same revision installs nothing. A folder gets one environment per path, brought up
to date (``uv pip install``, quick when nothing changed) on every start.

The ``uv`` binary comes from the ``uv`` package (``pip install "openenv-hub[uv]"``) or ``PATH``.

Example::

    with UvProvider.from_folder("envs/echo_env") as server:
        httpx.get(server.base_url + "/health")

Layer: runtimes.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from openenv_hub.errors import DependencyNotInstalledError, ServerStartError
from openenv_hub.model.manifest import load_manifest
from openenv_hub.runtimes.base import RuntimeBase, SpaceRef
from openenv_hub.runtimes.local import LocalProcessProvider
from openenv_hub.support.progress import report_progress
from openenv_hub.support.settings import cache_dir
from openenv_hub.support.settings import environment as process_environment

__all__ = ["UvProvider", "UvRuntime", "cache_root", "uv_binary"]

#: In an environment once it is made: the stamp of what it was made from.
COMPLETE_MARKER = ".complete"
#: In an environment: the folder or Space source it was made from (``openenv cache list``).
SOURCE_NOTE = ".openenv-source"


def lock_path(env_dir: Path) -> Path:
    """The file whose lock is held while the environment ``env_dir`` is being made."""
    return env_dir.with_name(f"{env_dir.name}.lock")


def uv_binary() -> str:
    """The ``uv`` executable: the ``uv`` package's, else one on ``PATH``."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
    raise DependencyNotInstalledError("uv", "uv", feature="The uv runtime")


def cache_root() -> Path:
    """Where the uv environments live (``uv-envs`` in :func:`openenv_hub.support.settings.cache_dir`)."""
    return cache_dir("uv-envs")


class UvProvider(LocalProcessProvider):
    """A server run by the python of a uv-made environment (a process of this one)."""

    runtime = "uv"

    @classmethod
    def from_folder(
        cls,
        path: str | Path,
        *,
        python: str | None = None,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout_s: float = 60.0,
    ) -> UvProvider:
        """Install the environment folder ``path`` (editable) in its own environment; serve it."""
        folder = Path(path).resolve()
        key = "folder-" + hashlib.sha256(str(folder).encode()).hexdigest()[:16]
        venv_python = prepare(folder, key, python=python, editable=True)
        return cls._serve(folder, venv_python, port=port, env=env, timeout_s=startup_timeout_s)

    @classmethod
    def from_source(
        cls,
        source: Path,
        key: str,
        *,
        python: str | None = None,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout_s: float = 60.0,
    ) -> UvProvider:
        """Serve a fixed source tree (a Space at a commit), installed once under ``key``."""
        venv_python = prepare(source, key, python=python, editable=False)
        return cls._serve(source, venv_python, port=port, env=env, timeout_s=startup_timeout_s)

    @classmethod
    def _serve(
        cls,
        source: Path,
        venv_python: Path,
        *,
        port: int | None,
        env: Mapping[str, str] | None,
        timeout_s: float,
    ) -> UvProvider:
        manifest = load_manifest(source)
        variables = {key: str(value) for key, value in manifest.variables.items()}
        server = cls.start(
            manifest.app_path,
            python=str(venv_python),
            cwd=venv_python.parent.parent,  # holds no package that could shadow the installed one
            port=port,
            env={**variables, **(env or {})},
            startup_timeout_s=timeout_s,
            runtime="uv",
        )
        assert isinstance(server, UvProvider)
        return server


class UvRuntime(RuntimeBase):
    """Folders and Spaces served from environments of their own, made by uv; see the module."""

    name = "uv"
    summary = "a virtual environment of its own, made by uv"
    inventory = "openenv_hub.runtimes.processes:ProcessInventory"
    options = {
        "folder": frozenset({"port", "env", "python", "startup_timeout_s"}),
        "space": frozenset({"python", "env", "startup_timeout_s"}),
    }

    def start_folder(self, path: Path, **options: Any) -> UvProvider:
        return UvProvider.from_folder(path, **options)

    def start_space(self, space: SpaceRef, **options: Any) -> UvProvider:
        """Serve the Space at ``space.revision`` from a uv environment made for that commit."""
        from openenv_hub.runtimes.space import made_from, space_files

        source = space_files(space)
        options.setdefault("startup_timeout_s", 120.0)
        return UvProvider.from_source(source.path, made_from(source), **options)


def prepare(source: Path, key: str, *, python: str | None, editable: bool) -> Path:
    """The python of the environment ``key`` with ``source`` installed (made when needed).

    A finished environment is used as it is while its stamp holds: the same ``pyproject.toml``
    and the same wheels offered (a Space's bundled ones, this openenv-hub's development build).
    Otherwise it is installed again, a folder editable so code changes show at once.
    """
    root = cache_root() / key
    root.parent.mkdir(parents=True, exist_ok=True)
    venv_python = root / "bin" / "python"
    marker = root / COMPLETE_MARKER
    with open(lock_path(root), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two starts of one revision make it once
        links = _find_links(source)
        stamp = _stamp(source, links)
        if marker.is_file() and venv_python.exists() and marker.read_text() == stamp:
            return _used(marker, venv_python, source)
        marker.unlink(missing_ok=True)
        uv = uv_binary()
        with report_progress(f"uv environment for {source.name}", "making it") as progress:
            if not venv_python.exists():
                _run([uv, "venv", "--quiet", "--python", python or sys.executable, str(root)])
            install = [uv, "pip", "install", "--quiet", "--python", str(venv_python)]
            for folder in links:
                install += ["--find-links", str(folder)]
            for name in _offered_packages(links):  # a new build keeps its version number
                install += ["--reinstall-package", name]
            install += ["--editable", str(source)] if editable else [str(source)]
            progress.stage(f"installing {source.name} and its dependencies")
            _run(install)
        (root / SOURCE_NOTE).write_text(str(source), encoding="utf-8")
        marker.write_text(stamp)
    return venv_python


def _used(marker: Path, venv_python: Path, source: Path) -> Path:
    """Note that the environment is used now (``openenv cache prune`` keeps recent ones), and
    what it was made from if an older version did not."""
    os.utime(marker)
    note = marker.parent / SOURCE_NOTE
    if not note.is_file():
        note.write_text(str(source), encoding="utf-8")
    return venv_python


def _stamp(source: Path, links: list[Path]) -> str:
    """What an install depends on: the project file and the wheels offered to it (their
    content: a development wheel is rebuilt under the same name and version)."""
    digest = hashlib.sha256()
    project = source / "pyproject.toml"
    digest.update(project.read_bytes() if project.is_file() else b"")
    for folder in links:
        for wheel in sorted(folder.glob("*.whl")):
            digest.update(wheel.name.encode() + b"\0" + hashlib.sha256(wheel.read_bytes()).digest())
    return digest.hexdigest()


def _offered_packages(links: list[Path]) -> list[str]:
    """The distributions the offered wheels hold: installed again whenever the stamp changes,
    since uv keeps an installed version that still satisfies the requirement."""
    return sorted({wheel.name.split("-")[0] for folder in links for wheel in folder.glob("*.whl")})


def _find_links(source: Path) -> list[Path]:
    """Wheels the source bundles, and this openenv-hub's wheel when PyPI cannot have it."""
    from openenv_hub.packaging import WHEELS_DIR, dev_wheel

    links = [source / WHEELS_DIR] if (source / WHEELS_DIR).is_dir() else []
    wheel = dev_wheel()
    if wheel is not None:
        links.append(wheel.parent)
    return links


def _run(command: list[str]) -> None:
    environment = {**process_environment(), "UV_PYTHON_DOWNLOADS": "never"}
    environment.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=900, check=False
    )
    if done.returncode != 0:
        raise ServerStartError(
            f"uv failed (exit {done.returncode}) while making the environment.",
            runtime="uv",
            command=" ".join(command),
            logs="\n".join((done.stdout + done.stderr).splitlines()[-30:]),
            hint="Read uv's output above: a dependency that cannot be found or built, or no "
            "access to the package index.",
        )
