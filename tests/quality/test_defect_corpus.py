"""The seeded-defect corpus: the quality scorecard catches every planted defect, names it with
its evidence, and raises no alarm on the sound environment the defects were planted in.

Each environment is served by uvicorn on 127.0.0.1 and scored through the wire, as any server."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from quality_corpus import DEFECTS, QuizEnvironment, app, quality
from serving import ServerThread

from openenv_hub.checks.scorecard import Scorecard
from openenv_hub.validation.quality import QualitySpec, scorecard

pytestmark = pytest.mark.slow


def score(url: str, tasks: int = 3) -> Scorecard:
    return scorecard(url, QualitySpec(quality=quality(tasks), name="quiz", version="0.1.0"))


def test_the_sound_quiz_raises_no_alarm(serve: Callable[..., ServerThread]) -> None:
    card = score(serve(app(QuizEnvironment)).url)
    statuses = {check.name: check.status for check in card.checks}
    assert statuses == {name: "pass" for name in statuses}, [c.to_json() for c in card.checks]
    floor = card.check("floor")
    assert floor is not None
    assert any(line.startswith("empty answer: 0 on seed-0") for line in floor.evidence)
    solvable = card.check("solvable")
    assert solvable is not None and solvable.measured["returns"] == {
        "seed-0": 1.0, "seed-1": 1.0, "seed-2": 1.0,
    }  # fmt: skip


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_planted_defect_is_caught_and_named(
    defect: str, serve: Callable[..., ServerThread]
) -> None:
    environment, check_name, words, also = DEFECTS[defect]
    card = score(serve(app(environment)).url, tasks=1 if defect == "slow reset" else 3)
    check = card.check(check_name)
    assert check is not None
    assert check.status == "fail", check.to_json()
    assert any(words in line for line in (check.summary, *check.evidence)), check.to_json()
    assert check.hint
    failed = {c.name for c in card.checks if c.status == "fail"}
    assert failed == {check_name, *also}, [c.to_json() for c in card.checks]
    errors = [c.name for c in card.checks if c.status == "error"]
    assert errors == [], f"the instrument failed on {errors}"
