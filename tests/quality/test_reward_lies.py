"""Scorecards that would vouch for a reward meaning nothing: a grader that pays 0 to everyone
(a floor of 0 is not "below the oracle"), a pass threshold every return meets, and a floor
that played no non-solution at all. Each is caught and named; the environments are served by
uvicorn on 127.0.0.1 and scored through the wire."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from quality_corpus import MANIFEST, QuizEnvironment, RewardsAnEmptyAnswer, app, quality
from serving import ServerThread

from openenv_hub.checks.scorecard import Scorecard
from openenv_hub.errors import ManifestError
from openenv_hub.model.manifest import load_manifest
from openenv_hub.validation.quality import QualitySpec, scorecard
from openenv_hub.validation.quality.policies import BUILT_IN

pytestmark = pytest.mark.slow


class PaysNothing(QuizEnvironment):
    """A grader that gives 0 to every answer, the right one included."""

    def grade(self, answer: str, code: str) -> float:
        return 0.0


def score(url: str, **settings: Any) -> Scorecard:
    spec = QualitySpec(quality=quality(3).model_copy(update=settings), name="quiz", version="1")
    return scorecard(url, spec)


def test_a_grader_that_pays_nothing_fails_solvable_and_floor(
    serve: Callable[..., ServerThread],
) -> None:
    card = score(serve(app(PaysNothing)).url)
    floor, solvable = card.check("floor"), card.check("solvable")
    assert floor is not None and solvable is not None
    assert solvable.status == "fail", solvable.to_json()
    assert floor.status == "fail", floor.to_json()
    assert any("not below the oracle's 0" in line for line in floor.evidence), floor.to_json()


def test_a_pass_threshold_at_the_bottom_of_the_range_is_refused(
    serve: Callable[..., ServerThread],
) -> None:
    card = score(serve(app(PaysNothing)).url, pass_threshold=0.0)
    solvable = card.check("solvable")
    assert solvable is not None and solvable.status == "fail", solvable.to_json()
    assert "pass_threshold" in solvable.summary and "pass_threshold" in solvable.hint


def test_a_manifest_whose_pass_threshold_every_return_meets_is_refused(tmp_path: Path) -> None:
    declared = "  pass_threshold: 0\nvalidation:\n  reward_range: [0, 1]\n"
    (tmp_path / "openenv.yaml").write_text(MANIFEST + declared, encoding="utf-8")
    with pytest.raises(ManifestError, match=r"quality\.pass_threshold .*reward_range"):
        load_manifest(tmp_path)
    above = declared.replace("pass_threshold: 0", "pass_threshold: 1")
    (tmp_path / "openenv.yaml").write_text(MANIFEST + above, encoding="utf-8")
    assert load_manifest(tmp_path).quality.pass_threshold == 1  # type: ignore[union-attr]


def test_a_floor_that_played_no_non_solution_is_not_a_pass(
    serve: Callable[..., ServerThread],
) -> None:
    exempt = {name: "solves it by design" for name in BUILT_IN}
    card = score(serve(app(RewardsAnEmptyAnswer)).url, exempt=exempt)
    floor = card.check("floor")
    assert floor is not None and floor.status == "skip", floor.to_json()
    assert "could not check" in floor.summary and "no non-solution was played" in floor.summary
