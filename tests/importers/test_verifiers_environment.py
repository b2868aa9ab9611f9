"""Two verifiers environments (single-turn with a dataset and a rubric; multi-turn with tools)
imported and served give the same rewards, and the same per-function scores, as verifiers' own
scoring of the same completions, in the same process (a venv with verifiers, whose pins the main
one cannot take: tests/importers/verifiers_requirements.txt)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from peer_venv import ensure_venv_of

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HERE = Path(__file__).parent
ENVS = HERE / "verifiers_envs"
REPO = HERE.parents[1]


@pytest.fixture(scope="module")
def verifiers_python() -> Path:
    return ensure_venv_of(HERE / "verifiers_requirements.txt", editable=(REPO,))


def _check(python: Path, module: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), str(HERE / "verifiers_check.py"), str(ENVS / module), module],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=HERE,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize(
    ("module", "tools"),
    [("vf_arith", ["submit"]), ("vf_lookup", ["add", "lookup", "submit"])],
)
def test_rewards_are_verifiers_own_for_the_same_completions(
    verifiers_python: Path, module: str, tools: list[str]
) -> None:
    checked = _check(verifiers_python, module)
    assert checked["tools"] == tools  # the environment's tools as MCP tools, and submit
    pairs = checked["pairs"]
    assert len(pairs) >= 20
    for pair in pairs:
        ours, theirs = pair["openenv"], pair["verifiers"]
        assert ours["done"], pair
        assert ours["reward"] == theirs["reward"], pair
        assert ours["breakdown"] == theirs["metrics"], pair  # each function's score
    rewards = {pair["verifiers"]["reward"] for pair in pairs}
    assert len(rewards) >= 3  # the completions are scored differently, not all alike
    first = pairs[0]["openenv"]["prompt"]
    assert first[-1]["role"] == "user" and "?" in first[-1]["content"]


def test_the_side_effect_module_does_run_when_imported(
    verifiers_python: Path, tmp_path: Path
) -> None:
    """The control of tests/importers/test_verifiers_detect.py: importing the module writes
    its file, so the file's absence there means detection ran none of it."""
    marker = tmp_path / "ran"
    subprocess.run(
        [str(verifiers_python), "-c", "import vf_side_effect"],
        cwd=ENVS / "vf_side_effect",
        env={**os.environ, "OPENENV_TEST_IMPORT_MARKER": str(marker)},
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert marker.read_text() == "ran"
