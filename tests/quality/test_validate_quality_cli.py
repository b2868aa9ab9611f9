"""``openenv validate --level quality``: on a running server (with the quality settings of a
manifest folder), on a folder (whose scorecard --save writes for push), as a table and as JSON."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from quality_corpus import MANIFEST, QuizEnvironment, RewardsAnEmptyAnswer, app
from serving import ServerThread

from openenv_hub.checks.scorecard import CHECK_NAMES, SCORECARD_FILE, Scorecard
from openenv_hub.hub import folder_digest

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache", SCORECARD_FILE)


@pytest.fixture
def manifest_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "quiz"
    folder.mkdir()
    (folder / "openenv.yaml").write_text(MANIFEST, encoding="utf-8")
    return folder


def test_a_running_server_gets_a_scorecard_in_the_json_report(
    cli: Callable[..., Any], serve: Callable[..., ServerThread], manifest_dir: Path
) -> None:
    url = serve(app(QuizEnvironment)).url
    result = cli("validate", url, "--level", "quality", "--manifest", manifest_dir, "--json")
    assert result.code == 0, result.text
    report = json.loads(result.out)
    assert report["level"] == "quality" and report["passed"] is True
    quality = report["quality"]
    assert [c["name"] for c in quality["checks"]] == list(CHECK_NAMES)
    assert {c["status"] for c in quality["checks"]} == {"pass"}
    assert quality["settings"]["oracle"] == "policy quality_corpus:oracle"
    assert quality["digest"] is None  # a URL: no files to vouch for
    levels = {c["name"]: c["level"] for c in report["checks"]}
    assert levels["websocket"] == "runtime" and levels["floor"] == "quality"


def test_a_defect_fails_the_command_and_its_evidence_is_printed(
    cli: Callable[..., Any], serve: Callable[..., ServerThread], manifest_dir: Path
) -> None:
    url = serve(app(RewardsAnEmptyAnswer)).url
    result = cli("validate", url, "--level", "quality", "--manifest", manifest_dir)
    assert result.code == 1, result.text
    assert "Failed: floor" in result.out
    assert "floor (fail):" in result.out
    assert "  empty answer: 1 on seed-0 > 0.5, 1 on seed-1 > 0.5, 1 on seed-2 > 0.5" in result.out


def test_without_a_manifest_a_url_is_held_to_the_defaults(
    cli: Callable[..., Any], serve: Callable[..., ServerThread]
) -> None:
    url = serve(app(QuizEnvironment)).url
    result = cli("validate", url, "--level", "quality", "--json")
    assert result.code == 0, result.text
    statuses = {c["name"]: c["status"] for c in json.loads(result.out)["quality"]["checks"]}
    assert statuses["solvable"] == "skip"  # no oracle declared
    assert statuses["floor"] == "pass"  # held below the top of the range [0, 1]
    assert statuses["determinism"] == statuses["isolation"] == "pass"


def test_a_folder_scorecard_is_saved_for_push(cli: Callable[..., Any], tmp_path: Path) -> None:
    folder = shutil.copytree(REPO / "envs" / "echo_env", tmp_path / "echo_env", ignore=CACHES)
    result = cli("validate", folder, "--level", "quality", "--save")
    assert result.code == 0, result.text
    assert "Quality scorecard" in result.out and "7/7 passed" in result.out
    card = Scorecard.from_json(json.loads((folder / SCORECARD_FILE).read_text()))
    assert card.environment == "echo_env" and not card.failed
    assert card.digest == folder_digest(folder)
    cost = card.check("cost")
    assert cost is not None and cost.measured["start_s"] > 0  # a server it started itself
    assert "memory_per_session_mb" in cost.measured


def test_save_needs_a_folder(cli: Callable[..., Any]) -> None:
    result = cli("validate", "http://127.0.0.1:9", "--level", "quality", "--save")
    assert result.code != 0
    assert "--save writes into an environment folder" in result.text


def test_a_manifest_must_be_a_folder_with_one(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("validate", "http://127.0.0.1:9", "--level", "quality", "--manifest", tmp_path)
    assert result.code != 0
    assert f"No openenv.yaml in {tmp_path}" in result.text
