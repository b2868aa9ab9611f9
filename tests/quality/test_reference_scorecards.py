"""The reference environments raise no alarm, and their committed scorecards (``quality.json``)
say what a fresh validation finds; the coding environment's grader holds against the
non-solutions that fooled an earlier one, in a scorecard made in under two minutes without a
Docker build."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from coding_env.server.degenerate import KNOWN_EXPLOITS

from openenv_hub.checks.scorecard import SCORECARD_FILE, Scorecard
from openenv_hub.validation import passed, validate_path

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
REFERENCE = {
    "echo_env": REPO / "envs" / "echo_env",
    "chess_env": REPO / "envs" / "chess_env",
    "atari_env": REPO / "envs" / "atari_env",
    "finance_env": REPO / "envs" / "finance_env",
    "cartpole_env": REPO / "examples" / "cartpole_env",  # Gymnasium's CartPole-v1
    "coding_env": REPO / "envs" / "coding_env",
}
#: The bound of a reference environment's validation at --level quality (server start included).
TWO_MINUTES_S = 120.0


def fresh_scorecard(folder: Path) -> Scorecard:
    cards: list[Scorecard] = []
    results = validate_path(folder, level="quality", on_scorecard=cards.append)
    assert passed(results), [r for r in results if not r.ok]
    (card,) = cards
    return card


def committed(folder: Path) -> Scorecard:
    return Scorecard.from_json(json.loads((folder / SCORECARD_FILE).read_text(encoding="utf-8")))


def assert_no_alarm_and_as_committed(name: str, card: Scorecard) -> None:
    alarms = [c.to_json() for c in card.checks if c.status in ("fail", "error")]
    assert alarms == [], alarms
    saved = committed(REFERENCE[name])
    assert saved.environment == name and not saved.failed and not saved.incomplete
    assert {c.name: c.status for c in saved.checks} == {c.name: c.status for c in card.checks}
    assert saved.settings["tasks"] == card.settings["tasks"]


@pytest.mark.parametrize("name", sorted(set(REFERENCE) - {"coding_env"}))
def test_a_reference_environment_raises_no_alarm(name: str) -> None:
    assert_no_alarm_and_as_committed(name, fresh_scorecard(REFERENCE[name]))


@pytest.mark.serial
def test_the_coding_grader_holds_against_the_known_exploits_in_under_two_minutes() -> None:
    started = time.monotonic()
    card = fresh_scorecard(REFERENCE["coding_env"])
    elapsed_s = time.monotonic() - started
    assert_no_alarm_and_as_committed("coding_env", card)
    floor = card.check("floor")
    assert floor is not None
    returns = floor.measured["returns"]
    for task_id, name in KNOWN_EXPLOITS:
        assert returns[name][task_id] == 0.0, (task_id, name)
    shown = "\n".join(floor.evidence)
    assert "0 on HumanEval/38 (an earlier grader gave it 1)" in shown
    assert "0 on HumanEval/83 (an earlier grader gave it 0.286)" in shown
    assert elapsed_s < TWO_MINUTES_S, f"{elapsed_s:.0f} s"
