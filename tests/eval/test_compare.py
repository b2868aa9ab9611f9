"""``openenv eval compare A B``: per-task differences, pass@k of each run with a bootstrap
confidence interval, and a paired sign-flip test over the tasks both played."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openenv_hub.eval import compare_runs, pass_at_k


def rows(passes: dict[str, list[bool]], *, errors: int = 0) -> list[dict[str, Any]]:
    made = [
        {"split": "test", "task_key": task, "sample": n, "passed": p, "finish": "done"}
        for task, outcomes in passes.items()
        for n, p in enumerate(outcomes)
    ]
    made += [
        {"split": "test", "task_key": "t0", "sample": 99 + n, "passed": None, "finish": "error"}
        for n in range(errors)
    ]
    return made


def test_runs_that_differ_on_every_task_have_a_small_p_value() -> None:
    a = rows({f"t{n}": [False, False] for n in range(10)}, errors=3)
    b = rows({f"t{n}": [True, n % 2 == 0] for n in range(10)})
    result = compare_runs(a, b)
    assert result.mean_difference == pytest.approx(0.75)
    assert result.p_value == pytest.approx(2 / 2**10)  # only all-plus and all-minus are as far
    assert result.errors == (3, 0)  # the error rows count in neither run
    value, low, high = result.pass_at_k["1"]["b"]
    assert value == pytest.approx(0.75) and low <= value <= high and high - low > 0
    assert result.pass_at_k["2"]["b"][0] == pytest.approx(1.0)
    assert result.pass_at_k["1"]["a"] == (0.0, 0.0, 0.0)
    assert {d.task: d.difference for d in result.tasks}["test/t1"] == pytest.approx(0.5)


def test_alike_runs_have_p_one_and_the_same_figures_each_time() -> None:
    a = rows({"x": [True, False, True], "y": [False, False, True], "z": [True, True, True]})
    result = compare_runs(a, a)
    assert result.p_value == 1.0 and result.mean_difference == 0.0
    again = compare_runs(a, a)
    assert again == result  # seeded: the same folders give the same intervals
    expected = (pass_at_k(3, 2, 2) + pass_at_k(3, 1, 2) + 1.0) / 3
    assert result.pass_at_k["2"]["a"][0] == pytest.approx(expected)


def test_compare_prints_the_differences_of_two_runs(
    cli: Any, word_game: Any, workdir: Path
) -> None:
    base = ("eval", word_game.url, "--policy", "guesser:guess", "--tasks", "tasks", "-k", 4)
    assert cli(*base, "--seed", 1, "-o", "a").code == 0
    assert cli(*base, "--seed", 2, "-o", "b").code == 0
    result = cli("eval", "compare", "a", "b")
    assert result.code == 0, result.text
    assert "A = a, B = b: 3 tasks in common." in result.out
    for k in range(1, 5):
        assert f"pass@{k}: A " in result.out
    assert "paired sign-flip test p = " in result.out
    summary_a = json.loads((workdir / "a" / "summary.json").read_text())
    assert f"A {summary_a['pass_at_k']['1']:.3f} [" in result.out
    as_json = json.loads(cli("eval", "compare", "a", "b", "--json").out)
    assert len(as_json["tasks"]) == 3 and 0 < as_json["p_value"] <= 1

    (workdir / "empty").mkdir()
    refused = cli("eval", "compare", "a", "empty")
    assert refused.code == 1 and "empty holds no rollouts" in refused.err
