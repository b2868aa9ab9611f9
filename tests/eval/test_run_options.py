"""An evaluation run driven from the library, without the command line: the options checked,
the task sources in their order, ``run.json``'s settings, and the summary with its plot.
``openenv eval`` parses its options into these calls and prints what they return."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import (
    ResultsFolder,
    RunOptions,
    RunPace,
    environment_record,
    errors_over_limit,
    find_tasks,
    parse_sampling_args,
    run_eval,
    served_env,
    write_summary,
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "is list JSON, not an object"),
        ('{"seed": 1, "model": "x"}', "may not set model, seed"),
    ],
)
def test_sampling_args_are_a_json_object_of_free_names(text: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        parse_sampling_args(text)
    assert caught.value.hint
    assert parse_sampling_args('{"top_k": 20}') == {"top_k": 20}
    assert parse_sampling_args(None) == {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (RunOptions(), "Choose one of --model"),
        (RunOptions(model="m", policy="p:f", base_url="http://h/v1"), "Choose one of --model"),
        (RunOptions(model="m"), "--model needs --base-url"),
        (RunOptions(policy="p:f", space="not a space"), "is not a Space id"),
    ],
)
def test_options_that_cannot_work_are_refused(options: RunOptions, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        options.check()


def test_a_run_from_the_library_writes_its_settings_rows_and_summary(
    workdir: Path, task_game: Any
) -> None:
    url = task_game.url
    with served_env(url) as served:
        routes, _ = find_tasks(url, None, None, url=url, served=served)
        given, total = find_tasks(url, "tasks", None, limit=2, url=url, served=served)
    assert [t.key for t in routes] == ["crane", "mango"]  # no --tasks: the task routes
    assert ([t.key for t in given], total) == (["brick", "pious"], 3)  # --tasks wins

    options = RunOptions(
        policy="guesser:guess",
        base_url="http://user:secret@127.0.0.1:9/v1",
        rollouts_per_task=2,
        sampling={"temperature": 0.5},
    )
    environment = environment_record(url, "my-org/word-game")
    settings = options.run_settings(served, environment, given, "tasks")
    assert settings["expected_rollouts"] == 4 and settings["tasks"] == "tasks"
    assert settings["sampling"] == {}  # a function policy samples nothing
    assert "secret" not in json.dumps(settings)
    assert environment["name"] == "word_game" and environment["space"] == "my-org/word-game"

    results = ResultsFolder(workdir / "out")
    results.start(settings, resume=False, tasks=given)
    played = asyncio.run(run_eval(url, options.plan(given), options.player(), results))
    results.unlock()
    summary = write_summary(
        results,
        rollouts_per_task=2,
        expected=[f"{t.split}/{t.key}" for t in given],
        pace=RunPace(played, 0, 2.0),
    )
    assert played == 4 and summary["rollouts"] == 4 and summary["errors"] == 0
    assert summary["last_run"]["rollouts_per_s"] == 2.0
    assert json.loads((workdir / "out" / ResultsFolder.SUMMARY).read_text()) == summary
    assert (workdir / "out" / ResultsFolder.PLOT).stat().st_size > 0


@pytest.mark.parametrize(
    ("errors", "rollouts", "fail_on_error", "over"),
    [(0, 4, 0.0, False), (1, 3, 0.0, True), (1, 3, 0.25, False), (2, 2, 0.25, True)],
)
def test_the_error_policy(errors: int, rollouts: int, fail_on_error: float, over: bool) -> None:
    summary = {"errors": errors, "rollouts": rollouts}
    assert errors_over_limit(summary, fail_on_error) is over
