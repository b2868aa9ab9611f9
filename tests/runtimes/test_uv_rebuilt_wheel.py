"""A folder's uv environment picks up a wheel rebuilt under the same name and version.

A development checkout offers its own openenv-hub as a wheel whose file name (and often size)
stays the same from one change to the next; the environment made for a folder must install the
new build, not keep the one it installed first. Shown with a tiny wheel of the test's own, two
builds of equal name and size.
"""

from __future__ import annotations

import base64
import hashlib
import subprocess
import zipfile
from pathlib import Path

import pytest

from openenv_hub.packaging import WHEELS_DIR
from openenv_hub.runtimes.uv import prepare

pytestmark = pytest.mark.slow

PACKAGE = "openenv_hub_tinydep"


def _write_wheel(folder: Path, answer: int) -> Path:
    """A valid pure-Python wheel ``openenv_hub_tinydep 1.0`` whose module holds ``ANSWER``."""
    info = f"{PACKAGE}-1.0.dist-info"
    files = {
        f"{PACKAGE}/__init__.py": f"ANSWER = {answer}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 1.0\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{PACKAGE}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), text)
    return wheel


def _answer(python: Path) -> str:
    done = subprocess.run(
        [str(python), "-c", f"import {PACKAGE}; print({PACKAGE}.ANSWER)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_a_rebuilt_wheel_of_the_same_version_is_installed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENENV_HUB_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "tiny_env"
    (folder / "tiny_env").mkdir(parents=True)
    (folder / "tiny_env" / "__init__.py").write_text("")
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=70.1"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "tiny-env"\nversion = "0.1"\ndependencies = ["{PACKAGE}"]\n'
    )
    first_size = _write_wheel(folder / WHEELS_DIR, answer=1).stat().st_size
    python = prepare(folder, "folder-tiny", python=None, editable=True)
    assert _answer(python) == "1"

    second = _write_wheel(folder / WHEELS_DIR, answer=2)  # same name, same size, new content
    assert second.stat().st_size == first_size
    python = prepare(folder, "folder-tiny", python=None, editable=True)
    assert _answer(python) == "2"
