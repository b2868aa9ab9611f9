"""The `openenv` package in a virtual environment of its own, for compatibility tests and
benchmarks. Its pins (tests/peer/requirements.txt) may conflict with ours, and the two sides
only ever talk over 127.0.0.1, so they need not share an interpreter."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import venv
from pathlib import Path

PEER_DIR = Path(__file__).parent / "peer"
REQUIREMENTS = PEER_DIR / "requirements.txt"


def cache_root() -> Path:
    base = os.environ.get("OPENENV_HUB_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "openenv-hub"
    )
    return Path(base)


def ensure_peer_python() -> Path:
    """Return the peer venv's python, creating the venv once per set of pins (locked)."""
    digest = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    root = cache_root() / f"peer-venv-{digest}"
    python = root / "bin" / "python"
    marker = root / ".complete"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"peer-venv-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(root)
            pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            subprocess.run(
                [*pip, "-r", str(REQUIREMENTS)], check=True, stdout=subprocess.DEVNULL
            )  # errors: on stderr
            marker.write_text(digest)
    return python


def ensure_venv_of(
    requirements: Path, *, editable: tuple[Path, ...] = (), interpreter: Path | None = None
) -> Path:
    """The python of a venv with ``requirements`` and the ``editable`` folders installed,
    made once per content of the requirements and per folder (its place and its
    ``pyproject.toml``: two checkouts get two venvs), locked. ``interpreter`` makes the venv
    (default: this one), for packages that need another Python."""
    digest = hashlib.sha256(requirements.read_bytes())
    for folder in editable:
        digest.update(str(folder.resolve()).encode())
        digest.update((folder / "pyproject.toml").read_bytes())
    if interpreter is not None:
        digest.update(str(interpreter).encode())
    root = cache_root() / f"{requirements.stem}-venv-{digest.hexdigest()[:12]}"
    python, marker = root / "bin" / "python", root / ".complete"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f"{root.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            if interpreter is None:
                venv.EnvBuilder(with_pip=True, clear=True).create(root)
            else:
                made = [str(interpreter), "-m", "venv", "--clear", str(root)]
                subprocess.run(made, check=True, stdout=subprocess.DEVNULL)  # errors: on stderr
            pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
            extra = [arg for folder in editable for arg in ("-e", str(folder))]
            subprocess.run(
                [*pip, "-r", str(requirements), *extra], check=True, stdout=subprocess.DEVNULL
            )  # errors: on stderr
            marker.write_text(root.name)
    return python


def find_python(version: str) -> Path | None:
    """An interpreter of ``version`` (``"3.12"``): on PATH, else the newest of pyenv's."""
    found = shutil.which(f"python{version}")
    if found and subprocess.run([found, "-c", ""], capture_output=True).returncode == 0:
        return Path(found)
    pyenv = Path(os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))) / "versions"
    candidates = sorted(pyenv.glob(f"{version}.*/bin/python{version}"))
    return candidates[-1] if candidates else None


if __name__ == "__main__":
    print(ensure_peer_python())
