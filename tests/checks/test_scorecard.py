"""The quality scorecard: its JSON round trip, what a Space card holds of it (bounded), its
badge, and how each check reads as a result of ``openenv validate``."""

from __future__ import annotations

import pytest

from openenv_hub.checks.scorecard import (
    CARD_EVIDENCE_LINES,
    CARD_LINE_CHARS,
    QualityCheck,
    Scorecard,
)


def card(*statuses: str) -> Scorecard:
    checks = tuple(
        QualityCheck(f"c{n}", status, f"c{n} {status}") for n, status in enumerate(statuses)
    )  # type: ignore[arg-type]
    return Scorecard("my_env", "0.1.0", checks, digest="sha256:00")


def test_the_json_round_trip_keeps_everything() -> None:
    long = QualityCheck("floor", "fail", "x" * 500, ("e",) * 30, {"returns": {"t": 1.0}}, "h")
    original = Scorecard(
        "my_env", "0.1.0", (long,), "envs/my_env", "2026-01-01", "sha256:1", {"a": 1}, 2.5
    )
    assert Scorecard.from_json(original.to_json()) == original


def test_a_card_holds_a_bounded_copy() -> None:
    long = QualityCheck("floor", "fail", "x" * 500, ("e" * 400,) * 30, {"returns": {}, "n": 3})
    held = Scorecard("my_env", "0.1.0", (long,)).card_metadata()["checks"][0]
    assert len(held["summary"]) == CARD_LINE_CHARS
    assert len(held["evidence"]) == CARD_EVIDENCE_LINES
    assert {len(line) for line in held["evidence"]} == {CARD_LINE_CHARS}
    assert held["measured"] == {"n": 3}  # figures only


@pytest.mark.parametrize(
    ("statuses", "badge"),
    [
        (("pass", "pass", "skip"), "2/2 passed"),
        (("pass", "fail", "fail"), "2 failed"),
        (("skip", "error"), "not checked"),
        (("pass", "error"), "1/1 passed"),
    ],
)
def test_the_badge(statuses: tuple[str, ...], badge: str) -> None:
    assert card(*statuses).badge() == badge


def test_a_check_that_could_not_run_is_neither_a_pass_nor_a_fail() -> None:
    error, skip, fail = card("error", "skip", "fail").results()
    assert error.skipped and error.message.startswith("could not check: ")
    assert skip.skipped and skip.message.startswith("skipped: ")
    assert not fail.ok and not fail.skipped
    assert {result.level for result in (error, skip, fail)} == {"quality"}
    assert card("error").incomplete and not card("error").failed


@pytest.mark.parametrize(
    "data",
    [[], {"checks": {}}, {"checks": [], "schema_version": 2}, {"checks": [{"status": "ok"}]}],
)
def test_what_is_not_a_scorecard_is_refused(data: object) -> None:
    with pytest.raises(ValueError):
        Scorecard.from_json(data)
