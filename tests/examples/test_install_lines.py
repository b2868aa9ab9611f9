"""The examples' install lines, run as examples/README.md prints them (with pip's ``--dry-run``,
so nothing is installed) in a new virtual environment: the first brings a CPU build of torch and
no CUDA packages, the second openenv-hub with its ``trl`` extra from the checkout, which no
package index has."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import REPO, doc_block

pytestmark = pytest.mark.slow

README = "examples/README.md"


def _dry_run(python: Path, line: str, report: Path) -> list[dict[str, Any]]:
    """``line`` (a ``pip install`` line) run by ``python``'s pip as a dry run; what pip would
    install, from its ``--report``."""
    words = shlex.split(line)
    assert words[:2] == ["pip", "install"], line
    command = [
        str(python),
        "-m",
        "pip",
        *words[1:],
        "--dry-run",
        "--quiet",
        "--report",
        str(report),
    ]
    done = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, f"{line}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    installs: list[dict[str, Any]] = json.loads(report.read_text())["install"]
    return installs


def _versions(installs: list[dict[str, Any]]) -> dict[str, str]:
    return {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in installs}


def test_the_install_lines_install_cpu_torch_and_the_checkout(tmp_path: Path) -> None:
    torch_line, checkout_line = doc_block(README, "examples-install").lines
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"

    torch = _versions(_dry_run(python, torch_line, tmp_path / "torch.json"))
    assert torch["torch"].endswith("+cpu"), torch
    assert not [name for name in torch if name.startswith("nvidia")], torch

    installs = _dry_run(python, checkout_line, tmp_path / "checkout.json")
    versions = _versions(installs)
    assert {"openenv-hub", "trl", "transformers"} <= set(versions), versions
    [ours] = [item for item in installs if item["metadata"]["name"].lower() == "openenv-hub"]
    assert ours["download_info"]["url"] == REPO.as_uri()  # the checkout, editable
    assert ours["download_info"].get("dir_info", {}).get("editable") is True
