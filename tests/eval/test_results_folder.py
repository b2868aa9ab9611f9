"""The results folder keeps whole rows only: a line cut short by a kill is dropped when the run
is resumed, so the rows appended after it stay readable."""

from __future__ import annotations

from pathlib import Path

import pytest

from openenv_hub.errors import ConfigurationError
from openenv_hub.eval import ResultsFolder

SETTINGS = {"model": "m", "rollouts_per_task": 2}


def row(key: str, sample: int) -> dict[str, object]:
    return {"split": "test", "task_key": key, "sample": sample, "return": 1.0}


def test_a_line_cut_by_a_kill_is_dropped_on_resume(tmp_path: Path) -> None:
    results = ResultsFolder(tmp_path / "r")
    results.start(SETTINGS, resume=False)
    results.append(row("a", 0))
    with results.rollouts_file.open("a") as file:
        file.write('{"split": "test", "task_key": "a", "sam')  # the kill came mid-write
    assert results.done() == {("test", "a", 0)}
    results.unlock()

    again = ResultsFolder(tmp_path / "r")
    again.start(SETTINGS, resume=True)
    again.append(row("a", 1))
    again.unlock()
    assert again.rows() == [row("a", 0), row("a", 1)]
    assert again.rollouts_file.read_text().count("\n") == 2


def test_a_folder_with_rollouts_is_not_overwritten(tmp_path: Path) -> None:
    results = ResultsFolder(tmp_path)
    results.start(SETTINGS, resume=False)
    results.append(row("a", 0))
    results.unlock()
    with pytest.raises(ConfigurationError, match="already holds rollouts"):
        ResultsFolder(tmp_path).start(SETTINGS, resume=False)
    with pytest.raises(ConfigurationError, match=r"other settings \(model\)"):
        ResultsFolder(tmp_path).start({**SETTINGS, "model": "other"}, resume=True)
