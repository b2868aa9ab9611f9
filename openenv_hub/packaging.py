"""Wheels of the running openenv-hub, for Docker build contexts and Space uploads.

openenv-hub may run from a source checkout (a development install) that PyPI has never seen.
An image built from an environment must then install *this* openenv-hub, not whatever PyPI
has (or nothing). :func:`dev_wheel` returns a wheel of the running version in that case (built
with ``pip wheel --no-deps`` from a clean copy of the source tree and cached by content hash),
and :func:`bundle_wheels` copies it into ``.openenv/wheels/`` of a build context, where the
Space Dockerfile finds it (``pip install --find-links ./.openenv/wheels``).

Layer: services.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from openenv_hub.errors import PackagingError
from openenv_hub.support.settings import cache_dir

__all__ = ["WHEELS_DIR", "PackagingError", "bundle_wheels", "dev_wheel", "source_tree"]

WHEELS_DIR = Path(".openenv") / "wheels"
DIST_NAME = "openenv-hub"
_PACKAGE_DIRS = ("openenv_hub", "cli")  # the library, and cli/ holding the `openenv` command
_SKIP = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", "build", "dist"}


def source_tree() -> Path | None:
    """The source checkout openenv-hub runs from, or ``None`` for a regular install."""
    root = Path(__file__).resolve().parent.parent
    if _is_source_tree(root):
        return root
    url = _direct_url()
    if url is not None:
        path = Path(unquote(urlsplit(url).path))
        if path.is_dir() and _is_source_tree(path):
            return path
    return None


def dev_wheel(*, cache_dir: Path | None = None) -> Path | None:
    """A wheel of the running openenv-hub when PyPI cannot provide it, else ``None``.

    A development install gets a wheel built from its source tree (cached by content hash);
    an install from a local wheel file gets that file.
    """
    src = source_tree()
    if src is None:
        return _installed_from_wheel()
    digest = content_hash(src)
    target = (cache_dir or _cache_dir()) / digest
    cached = sorted(target.glob("openenv_hub-*.whl"))
    if cached:
        return cached[0]
    return _build_wheel(src, target)


def bundle_wheels(context: Path, *, wheel: Path | None = None) -> list[Path]:
    """Copy the development wheel (if any) into ``context/.openenv/wheels``; return the copies."""
    wheel = wheel or dev_wheel()
    if wheel is None:
        return []
    destination = context / WHEELS_DIR
    destination.mkdir(parents=True, exist_ok=True)
    copy = destination / wheel.name
    shutil.copy2(wheel, copy)
    return [copy]


def content_hash(src: Path) -> str:
    """A hash of everything that goes into the wheel."""
    digest = hashlib.sha256()
    for path in sorted(_source_files(src)):
        digest.update(path.relative_to(src).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:20]


def _source_files(src: Path) -> list[Path]:
    files = [src / name for name in ("pyproject.toml", "README.md") if (src / name).is_file()]
    for package in _PACKAGE_DIRS:
        for dirpath, dirnames, filenames in os.walk(src / package, followlinks=True):
            dirnames[:] = [d for d in dirnames if d not in _SKIP and not d.endswith(".egg-info")]
            files.extend(Path(dirpath) / f for f in filenames if not f.endswith((".pyc", ".pyo")))
    return files


def _build_wheel(src: Path, target: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="openenv-wheel-") as tmp:
        copy = Path(tmp) / "src"
        ignore = shutil.ignore_patterns(*_SKIP, "*.pyc", "*.egg-info")
        for package in _PACKAGE_DIRS:
            shutil.copytree(src / package, copy / package, ignore=ignore)
        shutil.copy2(src / "pyproject.toml", copy / "pyproject.toml")
        readme = src / "README.md"
        if readme.is_file():
            shutil.copy2(readme, copy / "README.md")
        else:
            (copy / "README.md").write_text("# openenv-hub\n", encoding="utf-8")
        out = Path(tmp) / "out"
        command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out)]
        if _has_build_backend():
            command.append("--no-build-isolation")
        done = subprocess.run([*command, str(copy)], capture_output=True, text=True, check=False)
        wheels = sorted(out.glob("openenv_hub-*.whl"))
        if done.returncode != 0 or not wheels:
            raise PackagingError(
                f"Building a wheel of openenv-hub from {src} failed:\n{done.stderr[-2000:]}"
            )
        target.mkdir(parents=True, exist_ok=True)
        final = target / wheels[0].name
        # Copied beside, then renamed: a process building the same wheel at the same time, or
        # reading the cache meanwhile, never sees half a file.
        partial = target / f".{wheels[0].name}.{os.getpid()}.partial"
        shutil.copy2(wheels[0], partial)
        os.replace(partial, final)
        return final


def _is_source_tree(root: Path) -> bool:
    pyproject = root / "pyproject.toml"
    if not (pyproject.is_file() and (root / "openenv_hub" / "__init__.py").is_file()):
        return False
    return f'name = "{DIST_NAME}"' in pyproject.read_text(encoding="utf-8")


def _direct_url() -> str | None:
    try:
        text = metadata.distribution(DIST_NAME).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    if not text:
        return None
    url = json.loads(text).get("url")
    return url if isinstance(url, str) and url.startswith("file://") else None


def _installed_from_wheel() -> Path | None:
    url = _direct_url()
    if url is None:
        return None
    path = Path(unquote(urlsplit(url).path))
    return path if path.suffix == ".whl" and path.is_file() else None


def _has_build_backend() -> bool:
    try:
        major, minor = metadata.version("setuptools").split(".")[:2]
    except metadata.PackageNotFoundError:
        return False
    return (int(major), int(minor)) >= (70, 1)


def _cache_dir() -> Path:
    return cache_dir("wheels")
