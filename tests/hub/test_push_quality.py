"""``openenv push`` shows the folder's quality scorecard on the Space card: in its metadata
(``openenv_quality``, what the catalog reads) and as a README section with a badge and a table,
when ``quality.json`` was made for the files pushed; otherwise it leaves it out and says why."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from cli_runner import CliResult
from hub_support import space_files, unique_repo

from openenv_hub.checks.scorecard import CARD_KEY, SCORECARD_FILE, QualityCheck, Scorecard
from openenv_hub.hub import QUALITY_END, QUALITY_START, folder_digest
from openenv_hub.testing.pytest_plugin import HubEnv


def write_scorecard(folder: Path, *, floor: str = "pass", digest: str | None = None) -> Scorecard:
    card = Scorecard(
        "echo_env",
        "0.1.0",
        (
            QualityCheck("solvable", "pass", "the oracle reached 1 on all 3 tasks"),
            QualityCheck(
                "floor", floor, "empty answer | earned 0.5", ("empty answer: 0.5 on seed-0",)
            ),
            QualityCheck("no_leakage", "skip", "no answer to look for"),
            QualityCheck("cost", "pass", "reset_p50_ms 1.3", measured={"reset_p50_ms": 1.3}),
        ),
        target="envs/echo_env",
        checked_at="2026-01-02T03:04:05+00:00",
        digest=digest or folder_digest(folder),
    )
    (folder / SCORECARD_FILE).write_text(json.dumps(card.to_json()), encoding="utf-8")
    return card


def test_push_puts_the_scorecard_on_the_card(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    write_scorecard(echo_copy, floor="fail")
    repo_id = unique_repo(hub_env, "quality")
    result = cli("push", echo_copy, "--repo-id", repo_id)
    assert result.code == 0, result.text
    assert "Quality scorecard: 1 failed (card metadata 'openenv_quality' and a README section)" in (
        result.out
    )
    data = hub_env.api("alice").space_info(repo_id).card_data
    assert data is not None
    shown = Scorecard.from_json(data[CARD_KEY])
    assert [(c.name, c.status) for c in shown.checks] == [
        ("solvable", "pass"), ("floor", "fail"), ("no_leakage", "skip"), ("cost", "pass"),
    ]  # fmt: skip
    assert shown.check("floor").evidence == ("empty answer: 0.5 on seed-0",)  # type: ignore[union-attr]
    readme = space_files(hub_env, repo_id)["README.md"].decode()
    section = readme[readme.index(QUALITY_START) : readme.index(QUALITY_END)]
    assert "![quality: 1 failed](https://img.shields.io/badge/quality-1%20failed-red)" in section
    assert "| floor | ❌ fail | empty answer \\| earned 0.5 |" in section
    assert "| no_leakage | — not checked | no answer to look for |" in section
    assert "[quality.json](quality.json)" in section
    assert (echo_copy / "README.md").read_text(encoding="utf-8").count(QUALITY_START) == 0

    write_scorecard(echo_copy)  # the next push replaces the section
    assert cli("push", echo_copy, "--repo-id", repo_id).code == 0
    readme = space_files(hub_env, repo_id)["README.md"].decode()
    assert readme.count(QUALITY_START) == 1 and "quality-3%2F3%20passed-brightgreen" in readme


def test_a_scorecard_of_other_files_is_left_out(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    write_scorecard(echo_copy)
    server = echo_copy / "echo_env" / "server" / "environment.py"
    server.write_text(server.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    repo_id = unique_repo(hub_env, "stale")
    result = cli("push", echo_copy, "--repo-id", repo_id, "--dry-run")
    assert result.code == 0, result.text
    assert (
        "Quality scorecard: left out: quality.json was made for other files; run 'openenv "
        "validate echo_env --level quality --save' again" in result.out
    )
    assert cli("push", echo_copy, "--repo-id", repo_id).code == 0
    data = hub_env.api("alice").space_info(repo_id).card_data
    assert data is not None and CARD_KEY not in data
    assert QUALITY_START not in space_files(hub_env, repo_id)["README.md"].decode()


def test_a_broken_scorecard_is_left_out_and_named(
    hub_env: HubEnv, echo_copy: Path, cli: Callable[..., CliResult]
) -> None:
    (echo_copy / SCORECARD_FILE).write_text("{not json", encoding="utf-8")
    result = cli("push", echo_copy, "--repo-id", unique_repo(hub_env, "broken"), "--dry-run")
    assert result.code == 0, result.text
    assert "Quality scorecard: left out: quality.json is not JSON" in result.out
