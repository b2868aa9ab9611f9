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


def _dry_runs(python: Path, lines: list[str], folder: Path) -> list[list[dict[str, Any]]]:
    """Each of ``lines`` (``pip install`` lines) run by ``python``'s pip as a dry run, all at
    once (most of their time is waiting on the package index); what pip would install, from
    each one's ``--report``."""
    started = []
    for number, line in enumerate(lines):
        words = shlex.split(line)
        assert words[:2] == ["pip", "install"], line
        report = folder / f"report-{number}.json"
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
        process = subprocess.Popen(
            command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        started.append((line, report, process))
    reports = []
    try:
        for line, report, process in started:
            output, _ = process.communicate(timeout=900)
            assert process.returncode == 0, f"{line}\n{output[-6000:]}"
            reports.append(json.loads(report.read_text())["install"])
    finally:
        for *_, process in started:
            if process.poll() is None:
                process.kill()
                process.wait()
    return reports


def _versions(installs: list[dict[str, Any]]) -> dict[str, str]:
    return {item["metadata"]["name"].lower(): item["metadata"]["version"] for item in installs}


def test_the_install_lines_install_cpu_torch_and_the_checkout(tmp_path: Path) -> None:
    torch_line, checkout_line = doc_block(README, "examples-install").lines
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"

    torch_installs, installs = _dry_runs(python, [torch_line, checkout_line], tmp_path)
    torch = _versions(torch_installs)
    assert torch["torch"].endswith("+cpu"), torch
    assert not [name for name in torch if name.startswith("nvidia")], torch

    versions = _versions(installs)
    assert {"openenv-hub", "trl", "transformers"} <= set(versions), versions
    [ours] = [item for item in installs if item["metadata"]["name"].lower() == "openenv-hub"]
    assert ours["download_info"]["url"] == REPO.as_uri()  # the checkout, editable
    assert ours["download_info"].get("dir_info", {}).get("editable") is True
