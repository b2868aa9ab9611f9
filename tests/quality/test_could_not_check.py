"""A check that could not run says so, with the reason, and is never a pass or a fail of the
environment: nothing answering, a server that dies half-way, a reply that does not come in time."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from quality_corpus import MANIFEST, HangsOnLongAnswers, app, quality
from serving import ServerThread, free_port

from openenv_hub.runtimes.local import LocalProcessProvider
from openenv_hub.validation.quality import QualitySpec, scorecard

pytestmark = pytest.mark.slow
HERE = Path(__file__).resolve().parent


def spec() -> QualitySpec:
    return QualitySpec(quality=quality(), name="quiz")


@pytest.fixture
def dying_server() -> Iterator[LocalProcessProvider]:
    """The quiz in a process of its own, which exits at its eighth step."""
    server = LocalProcessProvider.start("dying_server:app", env_dir=HERE)
    with server:
        yield server


def test_nothing_answering_could_not_be_checked() -> None:
    card = scorecard(f"http://127.0.0.1:{free_port()}", spec())
    assert {check.status for check in card.checks} == {"error"}, card.to_json()
    assert all("reading the server" in check.summary for check in card.checks)
    assert card.incomplete and not card.failed
    solvable = card.check("solvable")
    assert solvable is not None
    result = solvable.result()
    assert result.skipped and result.message.startswith("could not check: ")


def test_a_server_that_dies_half_way_is_no_finding(dying_server: LocalProcessProvider) -> None:
    card = scorecard(dying_server.base_url, spec())
    statuses = {check.name: check.status for check in card.checks}
    assert statuses["solvable"] == "pass"  # the oracle played before the server died
    assert "fail" not in statuses.values(), card.to_json()
    after = ("floor", "no_leakage", "determinism", "seeds", "isolation", "cost")
    assert {statuses[name] for name in after} == {"error"}, statuses
    floor = card.check("floor")
    assert floor is not None and "ConnectError" in floor.summary, floor.to_json()
    assert floor.hint.startswith("The instrument failed, not the environment")


def test_a_reply_that_does_not_come_in_time_is_no_finding(
    serve: Callable[..., ServerThread],
) -> None:
    url = serve(app(HangsOnLongAnswers)).url
    card = scorecard(url, spec(), request_timeout_s=1.0)
    floor = card.check("floor")
    assert floor is not None and floor.status == "error", floor.to_json()
    assert floor.summary.startswith("EnvTimeoutError while playing "), floor.summary
    assert "fail" not in {check.status for check in card.checks}


def test_the_command_exits_3_when_a_check_could_not_run(
    cli: Callable[..., Any], dying_server: LocalProcessProvider, tmp_path: Path
) -> None:
    (tmp_path / "openenv.yaml").write_text(MANIFEST, encoding="utf-8")
    args = ("validate", dying_server.base_url, "--level", "quality", "--manifest", tmp_path)
    result = cli(*args, "--json")
    assert result.code == 3, result.text
    report = json.loads(result.out)
    assert report["passed"] is True  # nothing failed ...
    statuses = {check["name"]: check["status"] for check in report["quality"]["checks"]}
    assert statuses["floor"] == "error"  # ... and what could not run says so
    floor = next(c for c in report["checks"] if c["name"] == "floor")
    assert floor["level"] == "quality" and floor["skipped"] is True
    assert floor["message"].startswith("could not check: ")
