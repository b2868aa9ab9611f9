"""Wheelhouses for Space builds, which have no network on LocalHub: the wheels of
openenv-hub's dependencies (and more requirements), downloaded once and kept between runs.

``pip download`` runs on this machine, with its own index settings, for the Python and platform
of the test base image (Debian bookworm: CPython 3.11, glibc 2.36), wheels only.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CACHE_DIR = "/var/cache/openenv-hub"
BUILD_TOOLS = ("setuptools>=70.1", "wheel")
# glibc 2.36 runs wheels made for any glibc from 2.17 on (manylinux2014 is 2.17)
PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(17, 37)] + ["manylinux2014_x86_64"]
TARGET = [
    "--python-version", "3.11", "--implementation", "cp", "--only-binary=:all:",
    *(option for platform in PLATFORMS for option in ("--platform", platform)),
]  # fmt: skip


def openenv_hub_requirements() -> list[str]:
    """openenv-hub's own dependencies, as pyproject.toml lists them."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [str(requirement) for requirement in project["dependencies"]]


def wheelhouse(*more: str) -> Path:
    """A folder with the wheels of openenv-hub's dependencies, the build tools and ``more``."""
    requirements = sorted({*openenv_hub_requirements(), *BUILD_TOOLS, *more})
    digest = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:16]
    root = Path(os.environ.get("OPENENV_DOCKER_CACHE_DIR", DEFAULT_CACHE_DIR)) / "wheelhouses"
    return downloaded(root / digest, requirements, TARGET)


def downloaded(folder: Path, requirements: list[str], pip_args: Sequence[str] = ()) -> Path:
    """``folder``, holding the wheels of ``requirements`` (``pip download`` with ``pip_args``)
    once a first call has downloaded them. Under a lock, so that test processes side by side
    (pytest -n) download once; into a temporary folder renamed when complete, so that a download
    cut short leaves no half-filled folder taken for a whole one."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with (folder.parent / f"{folder.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (folder / ".complete").is_file():
            return folder
        with tempfile.TemporaryDirectory(dir=folder.parent, prefix="partial-") as tmp:
            command = [sys.executable, "-m", "pip", "download", "-q", *pip_args, "-d", tmp]
            done = subprocess.run(
                [*command, *requirements], capture_output=True, text=True, timeout=900, check=False
            )
            if done.returncode != 0:
                raise RuntimeError(f"pip download failed:\n{done.stderr[-3000:]}")
            (Path(tmp) / ".complete").write_text("\n".join(requirements))
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
    return folder
